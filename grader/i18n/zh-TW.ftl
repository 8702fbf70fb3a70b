# 評分程式本身給學生看的訊息（分數表、feedback.md、測試框架的輸出、Gradescope 的
# results.json），繁體中文（臺灣）。數字、項目 id 與程式碼原樣帶入。

## 分數表（src/report/table.rs）與 Classroom 步驟的輸出

table-item = 項目
table-points = 分數
table-status = 狀態
table-reason = 原因
table-total = 總分
table-sandbox = 沙箱：{ $sandbox }
status-passed = 通過
status-partial = 部分得分
status-failed = 未通過
status-skipped = 略過

## Markdown（src/report/markdown.rs）：步驟摘要與 feedback.md

md-status-passed = ✅ 通過
md-status-partial = 🟡 部分得分
md-status-failed = ❌ 未通過
md-status-skipped = ➖ 略過
md-table-header = | 項目 | 分數 | 狀態 | 原因 |
summary-heading = ### `{ $assignment }`：{ $score }/{ $max } 分
summary-seed = 本次評分的種子（seed）是 { $seed }：執行 `cargo test --test grade -- --seed { $seed }` 會用相同的輸入再評一次。
feedback-heading = # `{ $assignment }` 給 { $student } 的回饋
feedback-score = **分數：{ $score }/{ $max }**（seed { $seed }）
feedback-not-compiled = 你的程式無法編譯，所以沒有任何項目能評分。編譯器的錯誤訊息列在下面每個項目裡。
feedback-refused = 你的程式含有實驗作業不允許的寫法，所以沒有評分任何項目。位置和原因列在下面每個項目裡。
feedback-notes = ## 正式評分沒有採用的部分
feedback-lost = ## 失分的地方
feedback-repeat = 要在你的電腦上用相同的輸入再跑一次：`cargo test --test grade -- --seed { $seed }`。
feedback-not-graded-heading = # 給 { $student } 的回饋
feedback-not-graded = 你的繳交無法評分：

## 測試框架（src/harness/）：libtest 自己的字（test、ok、FAILED、ignored、test result）維持
## libtest 的寫法，讓讀取它們的工具照常運作。

harness-started = 正在評分 `{ $assignment }`，種子（seed）{ $seed }，GPU 項目執行於：{ $backend }（要完全重現這次執行：cargo test --test grade -- --seed { $seed }）
harness-building-emulator = 正在為 GPU 項目建置 GPU 模擬器（只有第一次執行需要，大約一分鐘）…
harness-warning = 警告：{ $note }
harness-ignored = ignored, { $reason }
harness-failure = 得到 { $score }/{ $max } 分。{ $details }
harness-edited-first = 上次執行後改過的部分先評分：{ $items }
harness-repeat = 種子（seed）{ $seed }：用 `cargo test --test grade -- --seed { $seed }` 重現這次執行
harness-sandbox = 沙箱（這台電腦允許的保護）：{ $sandbox }
prepare-building = 正在為 GPU 項目建置 GPU 模擬器（大約一分鐘）…
prepare-ready = 準備完成：GPU 項目將執行於：{ $backend }
classroom-earlier = { $id }：這次執行稍早已評過（種子 { $seed }），沿用那次的結果
classroom-grading = 正在評分 `{ $id }`，種子（seed）{ $seed }，GPU 項目執行於：{ $backend }
classroom-result = { $id }：{ $score }/{ $max } 分，{ $status }：{ $reason }
classroom-needs-one = 這個步驟需要 `{ $id }` 得到 { $points } 分：{ $verdict }
classroom-needs-many = 這個步驟需要 `{ $id }` 得到 { $points } 分：{ $verdict }
classroom-earned = 已達成
classroom-not-earned = 未達成

## 評分（src/grade.rs）與 `grader grade`

grade-output-dropped = 評分時你的程式多印出了 { $size }，超過評分程式保留的量；多出來的輸出已被捨棄（在迴圈裡印東西也會讓程式變慢）。
cli-note = 注意：{ $note }
cli-repeat = 種子（seed）{ $seed }：用 `grader grade { $path } --seed { $seed }` 重現這次執行

## Gradescope 的 results.json（src/report/gradescope.rs）

gs-not-graded-name = { $id }：{ $title } — 這裡沒有評分
gs-graded-on = [評分環境：{ $mode }] { $details }
gs-summary = { $assignment }：以種子 { $seed } 評分（用 --seed { $seed } 重現）
gs-not-compiled = 你的程式無法編譯：每個項目都是 0 分；下面每個測試都列出編譯器的第一個錯誤。
gs-note = 注意：{ $note }
gs-sandbox = 沙箱：{ $sandbox }
gs-not-graded-here = 這裡沒有評分：{ $reason } { $counts }
gs-counts-zero = 評分標準規定：無法量測時算 0 分。
gs-left-out = 這一項不計入滿分。

## 速度圖 (src/report/chart.rs)

chart-title = 你的速度：一次矩陣乘法的時間與矩陣大小
chart-subtitle = 由評分程式計時（中位數）。越低越快。兩軸皆為對數刻度。
chart-x-axis = 矩陣大小（n×n 乘 n×n 的 n）
chart-y-axis = 每次乘法的毫秒數
chart-graded = 評分用的大小
chart-emulated = 模擬的 GPU（不是真實速度）
chart-not-timed = 不在此圖中
chart-image-alt = 你的速度圖：你的時間與評分程式的時間對矩陣大小，並標出各速度等級
chart-summary-note = 步驟摘要無法顯示速度圖（GitHub 會移除執行時產生的圖片）。請在你的電腦上執行 `cargo test` 並開啟 `target/gpu-labs/chart.svg`；圖中的數字如下：
chart-written = 速度圖（你的時間對矩陣大小，與評分程式的並列）：{ $path }
chart-tier-one = 比基準快 { $speedup }×：{ $points } 分
chart-tier = 比基準快 { $speedup }×：{ $points } 分
chart-handover = 時間是從你的程式外部量測的，每次執行扣除交付矩陣所需的 { $ms } ms；太快而無法這樣計時的大小不列入。
chart-samples = 評分用的大小使用評分時的 { $graded } 個樣本；其他大小各 { $extra } 個，只為此圖計時（不計分）。
