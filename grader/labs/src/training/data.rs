//! The data the training lab trains on. Grading never downloads anything: the toy set and the
//! digit images are generated from a seed (in `grader-hot`, built optimised:
//! [`grader_hot::training::data`]), so the worker and the supervisor build the same examples
//! and a run repeats exactly with `--seed N`. Instructors who have MNIST's IDX files can read
//! them with [`mnist`] instead.

pub use grader_hot::training::data::{
    normalise, synthetic_digits, toy_set, Dataset, IMAGE_PIXELS, IMAGE_SIDE, MNIST_MEAN, MNIST_STD,
    TOY_FEATURES,
};

use super::t;
use ndarray::Array2;
use std::path::{Path, PathBuf};

/// Why an MNIST IDX file could not be read: each names the file and, where the content is
/// at fault, the byte, and says what to do.
#[derive(Debug)]
pub enum IdxError {
    /// The file could not be opened or read.
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        source: std::io::Error,
    },
    /// The file is shorter than the 4-byte start or the dimensions it announces.
    ShortHeader {
        /// The file.
        path: PathBuf,
        /// The file's length.
        len: usize,
        /// How long the header should be.
        header: usize,
    },
    /// One of the first two bytes is not zero.
    Magic {
        /// The file.
        path: PathBuf,
        /// 0 or 1.
        offset: usize,
        /// The byte found there.
        found: u8,
    },
    /// The data are not unsigned bytes.
    DataType {
        /// The file.
        path: PathBuf,
        /// The type byte found.
        found: u8,
    },
    /// Images have 3 dimensions and labels 1; the file has another number.
    Dimensions {
        /// The file.
        path: PathBuf,
        /// The number of dimensions found.
        found: u8,
        /// The number expected.
        expected: u8,
        /// `images` or `labels`.
        what: &'static str,
    },
    /// The file is shorter than its header says.
    Truncated {
        /// The file.
        path: PathBuf,
        /// The file's length.
        len: usize,
        /// The length its header describes.
        promised: u128,
    },
    /// The file goes on after the data its header describes.
    ExtraBytes {
        /// The file.
        path: PathBuf,
        /// The file's length.
        len: usize,
        /// The length its header describes.
        promised: usize,
    },
    /// A label is not a digit.
    Label {
        /// The file.
        path: PathBuf,
        /// Where the label is.
        offset: usize,
        /// The label found.
        label: u8,
    },
    /// The images and labels files hold different numbers of examples.
    CountMismatch {
        /// The images file.
        images: PathBuf,
        /// How many images it holds.
        image_count: usize,
        /// The labels file.
        labels: PathBuf,
        /// How many labels it holds.
        label_count: usize,
    },
}

impl std::fmt::Display for IdxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let message = match self {
            IdxError::Io { path, source } => {
                t!("idx-io", path = path.display(), error = source)
            }
            IdxError::ShortHeader { path, len, header } => t!(
                "idx-short-header",
                path = path.display(),
                len = len,
                header = header
            ),
            IdxError::Magic {
                path,
                offset,
                found,
            } => t!(
                "idx-magic",
                path = path.display(),
                offset = offset,
                found = format!("{found:02x}")
            ),
            IdxError::DataType { path, found } => t!(
                "idx-data-type",
                path = path.display(),
                found = format!("{found:02x}")
            ),
            IdxError::Dimensions {
                path,
                found,
                expected,
                what,
            } => {
                let key = if *what == "labels" {
                    "idx-dimensions-labels"
                } else {
                    "idx-dimensions-images"
                };
                super::MESSAGES.format(
                    key,
                    &[
                        ("path", &path.display()),
                        ("found", found),
                        ("expected", expected),
                    ],
                )
            }
            IdxError::Truncated {
                path,
                len,
                promised,
            } => t!(
                "idx-truncated",
                path = path.display(),
                len = len,
                promised = promised
            ),
            IdxError::ExtraBytes {
                path,
                len,
                promised,
            } => t!(
                "idx-extra-bytes",
                path = path.display(),
                len = len,
                promised = promised
            ),
            IdxError::Label {
                path,
                offset,
                label,
            } => t!(
                "idx-label",
                path = path.display(),
                offset = offset,
                label = label
            ),
            IdxError::CountMismatch {
                images,
                image_count,
                labels,
                label_count,
            } => t!(
                "idx-count-mismatch",
                images = images.display(),
                image_count = image_count,
                labels = labels.display(),
                label_count = label_count
            ),
        };
        f.write_str(&message)
    }
}

impl std::error::Error for IdxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            IdxError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Reads an IDX file of unsigned bytes with `dimensions` dimensions: their sizes and the data.
fn read_idx(
    path: &Path,
    dimensions: u8,
    what: &'static str,
) -> Result<(Vec<usize>, Vec<u8>), IdxError> {
    // The MNIST files a student or an instructor downloaded, read where they train (never by
    // a supervisor grading a submission): not bounded.
    #[allow(clippy::disallowed_methods)]
    let bytes = std::fs::read(path).map_err(|source| IdxError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let header = 4 + 4 * usize::from(dimensions);
    let short_header = || IdxError::ShortHeader {
        path: path.to_path_buf(),
        len: bytes.len(),
        header,
    };
    let start = bytes.get(..4).ok_or_else(short_header)?;
    if let Some(offset) = start[..2].iter().position(|&byte| byte != 0) {
        return Err(IdxError::Magic {
            path: path.to_path_buf(),
            offset,
            found: start[offset],
        });
    }
    if start[2] != 0x08 {
        return Err(IdxError::DataType {
            path: path.to_path_buf(),
            found: start[2],
        });
    }
    if start[3] != dimensions {
        return Err(IdxError::Dimensions {
            path: path.to_path_buf(),
            found: start[3],
            expected: dimensions,
            what,
        });
    }
    let sizes: Vec<usize> = bytes
        .get(4..header)
        .ok_or_else(short_header)?
        .chunks_exact(4)
        .map(|size| u32::from_be_bytes([size[0], size[1], size[2], size[3]]) as usize)
        .collect();
    // At most 2^96 for three u32 sizes: no overflow in u128.
    let promised = header as u128 + sizes.iter().map(|&size| size as u128).product::<u128>();
    if promised > bytes.len() as u128 {
        return Err(IdxError::Truncated {
            path: path.to_path_buf(),
            len: bytes.len(),
            promised,
        });
    }
    let promised = promised as usize;
    if promised < bytes.len() {
        return Err(IdxError::ExtraBytes {
            path: path.to_path_buf(),
            len: bytes.len(),
            promised,
        });
    }
    let mut data = bytes;
    data.drain(..header);
    Ok((sizes, data))
}

/// Reads an MNIST images file (`*-images-idx3-ubyte`): one row per image, its pixels row by
/// row scaled to [0, 1] (byte / 255) but not normalised, for instructors who train on the
/// real digits.
pub fn read_idx_images(path: &Path) -> Result<Array2<f64>, IdxError> {
    let (sizes, pixels) = read_idx(path, 3, "images")?;
    let (count, image_pixels) = (sizes[0], sizes[1] * sizes[2]);
    Ok(Array2::from_shape_fn(
        (count, image_pixels),
        |(image, pixel)| f64::from(pixels[image * image_pixels + pixel]) / 255.0,
    ))
}

/// Reads an MNIST labels file (`*-labels-idx1-ubyte`): one digit per image.
pub fn read_idx_labels(path: &Path) -> Result<Vec<usize>, IdxError> {
    const HEADER: usize = 8;
    let (_, labels) = read_idx(path, 1, "labels")?;
    labels
        .iter()
        .enumerate()
        .map(|(index, &label)| {
            if label < 10 {
                Ok(usize::from(label))
            } else {
                Err(IdxError::Label {
                    path: path.to_path_buf(),
                    offset: HEADER + index,
                    label,
                })
            }
        })
        .collect()
}

/// The real MNIST, from its images and labels files, normalised like the lesson's transform
/// ((byte / 255 − 0.1307) / 0.3081), for instructors who have the files.
pub fn mnist(images: &Path, labels: &Path) -> Result<Dataset, IdxError> {
    let mut inputs = read_idx_images(images)?;
    let label_list = read_idx_labels(labels)?;
    if inputs.nrows() != label_list.len() {
        return Err(IdxError::CountMismatch {
            images: images.to_path_buf(),
            image_count: inputs.nrows(),
            labels: labels.to_path_buf(),
            label_count: label_list.len(),
        });
    }
    inputs.mapv_inplace(normalise);
    Ok(Dataset {
        inputs,
        labels: label_list,
        classes: 10,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An IDX file of unsigned bytes with these dimensions and data.
    fn idx_bytes(dimensions: &[u32], data: &[u8]) -> Vec<u8> {
        let mut bytes = vec![0, 0, 0x08, dimensions.len() as u8];
        for dimension in dimensions {
            bytes.extend(dimension.to_be_bytes());
        }
        bytes.extend(data);
        bytes
    }

    /// Three 28×28 images: pixel `i` of image `k` is `(i + 100 k) % 256`, so each has a 0 and
    /// a 255.
    fn three_image_pixels() -> Vec<u8> {
        (0..3 * IMAGE_PIXELS)
            .map(|i| ((i % IMAGE_PIXELS + 100 * (i / IMAGE_PIXELS)) % 256) as u8)
            .collect()
    }

    /// Writes `bytes` as `name` in `dir` and gives its path.
    fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, bytes).expect("write a test file");
        path
    }

    /// The message of an error that must be there.
    fn message<T: std::fmt::Debug>(result: Result<T, IdxError>) -> String {
        result.expect_err("the file is malformed").to_string()
    }

    #[test]
    fn valid_idx_files_read_back_exactly() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let pixels = three_image_pixels();
        let images = write(dir.path(), "images", &idx_bytes(&[3, 28, 28], &pixels));
        let labels = write(dir.path(), "labels", &idx_bytes(&[3], &[7, 0, 9]));

        let raw = read_idx_images(&images).expect("valid images");
        assert_eq!(raw.dim(), (3, IMAGE_PIXELS));
        for (value, &byte) in raw.iter().zip(&pixels) {
            assert_eq!(*value, f64::from(byte) / 255.0);
        }
        assert_eq!(
            read_idx_labels(&labels).expect("valid labels"),
            vec![7, 0, 9]
        );

        let set = mnist(&images, &labels).expect("a valid pair");
        assert_eq!(set.labels, vec![7, 0, 9]);
        assert_eq!(set.classes, 10);
        // Pixel 0 of image 0 is 0 and pixel 255 is 255.
        assert!((set.inputs[[0, 0]] - (0.0 - 0.1307) / 0.3081).abs() < 1e-12);
        assert!((set.inputs[[0, 255]] - (1.0 - 0.1307) / 0.3081).abs() < 1e-12);
        // Pixel 0 of image 1 is 100.
        assert!((set.inputs[[1, 0]] - (100.0 / 255.0 - 0.1307) / 0.3081).abs() < 1e-12);
    }

    #[test]
    fn malformed_idx_files_say_which_file_which_byte_and_what_to_do() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let pixels = three_image_pixels();
        let valid_images = idx_bytes(&[3, 28, 28], &pixels);
        let labels = write(dir.path(), "labels", &idx_bytes(&[3], &[1, 2, 3]));

        let truncated = write(dir.path(), "truncated", &valid_images[..2000]);
        let text = message(read_idx_images(&truncated));
        assert!(
            text.starts_with(&format!("{}: ", truncated.display())),
            "{text}"
        );
        assert!(
            text.contains("ends at byte 2000 but its header promises 2368 bytes"),
            "{text}"
        );
        assert!(text.contains("incomplete"), "{text}");

        let short = write(dir.path(), "short", &valid_images[..10]);
        let text = message(read_idx_images(&short));
        assert!(
            text.contains("short: the file ends at byte 10, inside its 16-byte header"),
            "{text}"
        );

        let longer = write(dir.path(), "longer", &[&valid_images[..], &[0]].concat());
        let text = message(read_idx_images(&longer));
        assert!(text.contains("longer: byte 2368: "), "{text}");

        let gzipped = write(dir.path(), "gzipped", &[0x1f, 0x8b, 0x08, 0x00]);
        let text = message(read_idx_images(&gzipped));
        assert!(text.contains("gzipped: byte 0 is 0x1f, not 0x00"), "{text}");

        let mut wrong_type = valid_images.clone();
        wrong_type[2] = 0x0d;
        let wrong_type = write(dir.path(), "wrong-type", &wrong_type);
        let text = message(read_idx_images(&wrong_type));
        assert!(
            text.contains("wrong-type: byte 2: the data type is 0x0d, not 0x08"),
            "{text}"
        );

        // A labels file where images are expected, and the other way round.
        let text = message(read_idx_images(&labels));
        assert!(
            text.contains("labels: byte 3: the number of dimensions is 1, not 3"),
            "{text}"
        );
        let images = write(dir.path(), "images", &valid_images);
        let text = message(read_idx_labels(&images));
        assert!(
            text.contains("images: byte 3: the number of dimensions is 3, not 1"),
            "{text}"
        );

        let eleven = write(dir.path(), "eleven", &idx_bytes(&[3], &[1, 11, 3]));
        let text = message(read_idx_labels(&eleven));
        assert!(
            text.contains("eleven: byte 9: label 11 is not a digit 0-9"),
            "{text}"
        );

        let two_labels = write(dir.path(), "two-labels", &idx_bytes(&[2], &[1, 2]));
        let text = message(mnist(&images, &two_labels));
        assert!(text.contains("images (byte 4) holds 3 images"), "{text}");
        assert!(
            text.contains("two-labels (byte 4) holds 2 labels"),
            "{text}"
        );

        let missing = dir.path().join("missing");
        let text = message(read_idx_labels(&missing));
        assert!(text.contains("missing: cannot read the file: "), "{text}");
        assert!(matches!(
            read_idx_labels(&missing),
            Err(IdxError::Io { .. })
        ));
    }
}
