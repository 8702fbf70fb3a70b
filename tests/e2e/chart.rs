//! End-to-end: a student's `cargo test` of the matmul solution writes the speed chart. The SVG
//! is well-formed XML, shows the student's CPU line beside the grader's baseline with the
//! tier lines, carries the very numbers of the report it was drawn from, and never shows an
//! emulator's time as a GPU's.

use gpu_labs_e2e::{one_at_a_time, workspace, TEST_GPU_MODE};
use serde_json::Value;
use std::process::Command;

/// The `data-ms` of every point of series `series` in the panel of item `id`.
fn drawn_ms(svg: &roxmltree::Document, id: &str, series: &str) -> Vec<f64> {
    let panel = svg
        .descendants()
        .find(|n| n.attribute("data-item") == Some(id))
        .unwrap_or_else(|| panic!("no panel for {id}"));
    let group = panel
        .descendants()
        .find(|n| n.attribute("data-series") == Some(series))
        .unwrap_or_else(|| panic!("no {series} series for {id}"));
    group
        .descendants()
        .filter_map(|n| n.attribute("data-ms"))
        .map(|v| v.parse().expect("a number"))
        .collect()
}

#[test]
fn a_students_cargo_test_writes_a_speed_chart_of_what_the_grader_measured() {
    // Full suite only: its `cargo test -p matmul-lab` builds the grader with the lab's features
    // alone, a second build of the grader's crates (about 35 s); the default suite's run of
    // the solution's own tests/grade.rs writes the chart too.
    if gpu_labs_e2e::skip_unless_full() {
        return;
    }
    let crate_dir = workspace().join("solutions/matmul");
    let chart_dir = crate_dir.join("target/gpu-labs");
    let _ = std::fs::remove_dir_all(&chart_dir);
    let started = std::time::Instant::now();
    let out = one_at_a_time(|| {
        Command::new(env!("CARGO"))
            .args([
                "test",
                "-p",
                "matmul-lab",
                "--test",
                "grade",
                "--",
                "speedup",
            ])
            .current_dir(workspace())
            .env("GRADER_GPU", TEST_GPU_MODE)
            .env_remove("RUSTFLAGS")
            .output()
            .expect("cargo runs")
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!(
        "cargo test -- speedup took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let svg_path = chart_dir.join("chart.svg");
    assert!(
        stdout.contains(&format!(
            "speed chart (your times against matrix size, beside the grader's): {}",
            svg_path.display()
        )),
        "the path is printed under the table:\n{stdout}"
    );
    let text = std::fs::read_to_string(&svg_path).expect("the chart is written");
    let svg = roxmltree::Document::parse(&text).expect("the chart is well-formed XML");
    assert_eq!(svg.root_element().tag_name().name(), "svg");
    let report: Value = serde_json::from_slice(
        &std::fs::read(chart_dir.join("report.json")).expect("report.json beside the chart"),
    )
    .expect("report.json parses");
    let items = report["items"].as_array().expect("items");
    let item = |id: &str| {
        items
            .iter()
            .find(|i| i["id"] == id)
            .unwrap_or_else(|| panic!("no {id} in the report"))
    };

    // The CPU speed item: the student's line and the baseline, point for point the report's.
    let sweep = &item("fast_speedup")["sweep"];
    let points = sweep["points"].as_array().expect("points");
    assert!(
        points.len() >= 2,
        "the graded size and at least one more: {sweep}"
    );
    assert_eq!(
        points.iter().filter(|p| p["graded"] == true).count(),
        1,
        "{sweep}"
    );
    assert_eq!(sweep["device"], "cpu");
    for (series, key) in [("candidate", "candidate_ms"), ("baseline", "baseline_ms")] {
        let reported: Vec<f64> = points
            .iter()
            .map(|p| p[key].as_f64().expect("a time"))
            .collect();
        assert_eq!(drawn_ms(&svg, "fast_speedup", series), reported, "{series}");
    }
    // The graded point is the graded measurement: its speedup is the item's within noise of
    // the medians (a median of ratios against a ratio of medians).
    let graded = points.iter().find(|p| p["graded"] == true).expect("graded");
    let ratio = graded["baseline_ms"].as_f64().unwrap() / graded["candidate_ms"].as_f64().unwrap();
    let speedup = item("fast_speedup")["speedup"].as_f64().expect("a speedup");
    assert!(
        (ratio / speedup - 1.0).abs() < 0.5,
        "graded point {ratio} against the item's {speedup}"
    );
    let labels: Vec<&str> = svg
        .descendants()
        .filter_map(|n| n.attribute("data-label"))
        .collect();
    assert!(labels.contains(&"your matmul_fast"), "{labels:?}");
    assert!(
        labels.contains(&"the grader's naive triple loop"),
        "{labels:?}"
    );
    // One dashed line per tier of the rubric, at baseline / speedup.
    let tiers: Vec<f64> = svg
        .descendants()
        .filter(|n| n.attribute("data-series") == Some("tier"))
        .filter_map(|n| n.attribute("data-speedup"))
        .map(|v| v.parse().expect("a speedup"))
        .collect();
    let rubric: Vec<f64> = sweep["tiers"]
        .as_array()
        .expect("tiers")
        .iter()
        .map(|t| t["speedup"].as_f64().expect("a speedup"))
        .collect();
    assert_eq!(tiers, rubric);
    assert_eq!(tiers, [2.0, 5.0, 12.0], "the matmul rubric's CPU tiers");

    // The GPU speed items: on the emulator they are not timed, and the chart says so instead of
    // drawing an emulator's times; on a real GPU, the GPU item has its own panel.
    for id in ["gpu_speedup", "gpu_batched_speedup"] {
        let gpu = &item(id)["sweep"];
        match gpu["device"].as_str() {
            Some("emulated-gpu") => {
                assert_eq!(gpu["points"].as_array().map(Vec::len), Some(0), "{gpu}");
                assert!(
                    !svg.descendants()
                        .any(|n| n.attribute("data-item") == Some(id)),
                    "no {id} panel on the emulator"
                );
                let notes: Vec<&str> = svg
                    .descendants()
                    .filter(|n| n.has_attribute("data-note"))
                    .filter_map(|n| n.text())
                    .collect();
                let said = notes.join(" ");
                assert!(
                    said.contains(&format!("Not on this chart: {id} (needs a real GPU")),
                    "{said}"
                );
            }
            Some("gpu") if id == "gpu_speedup" => {
                assert!(!drawn_ms(&svg, id, "candidate").is_empty())
            }
            _ => {}
        }
    }
    assert!(!text.contains("data-device=\"gpu\"") || TEST_GPU_MODE != "emulate");
}
