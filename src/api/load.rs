//! Reading `-f` inputs: files, directories (recursively, `*.yaml`/`*.yml`/`*.json`, sorted so a
//! plan never depends on directory order), and `-` for stdin; then splitting each into
//! documents (multi-document YAML, one or more concatenated JSON values).
//!
//! Nothing here knows Kubernetes or YAML: it turns paths into named texts, or a one-line
//! error naming the path.

use std::collections::BTreeSet;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::error::InputError;

/// One input after reading: its name for messages and origins, and its text.
pub(crate) struct Source {
    /// As written by the user, or the path found under a directory; `-` for stdin.
    pub name: String,
    /// The decoded text.
    pub text: String,
    /// Named explicitly (a file or stdin), as opposed to found while walking a directory: an
    /// explicit input without objects is an error, an empty file inside a directory is not.
    pub explicit: bool,
}

/// Directory entries deeper than this are not followed (a guard against pathological trees;
/// symlink loops are caught separately).
const MAX_DEPTH: usize = 64;

fn io_error(path: &str, e: &std::io::Error) -> InputError {
    let message = match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        _ => e.to_string(),
    };
    InputError::Read {
        path: path.to_string(),
        message,
    }
}

/// Reads every input named on the command line, in order.
pub(crate) fn read_sources(
    paths: &[String],
    stdin: &mut dyn Read,
) -> Result<Vec<Source>, InputError> {
    if paths.is_empty() {
        return Err(InputError::Empty {
            path: "-f".into(),
            what: "no input given (pass a file, a directory, or - for stdin)".into(),
        });
    }
    let mut out = Vec::new();
    for path in paths {
        if path == "-" {
            let mut bytes = Vec::new();
            stdin
                .read_to_end(&mut bytes)
                .map_err(|e| io_error("<stdin>", &e))?;
            out.push(Source {
                name: "-".into(),
                text: decode_text("<stdin>", bytes)?,
                explicit: true,
            });
            continue;
        }
        if path.is_empty() {
            return Err(InputError::Read {
                path: "\"\"".into(),
                message: "empty path".into(),
            });
        }
        let meta = fs::metadata(path).map_err(|e| io_error(path, &e))?;
        if meta.is_dir() {
            let mut files = Vec::new();
            let mut seen = BTreeSet::new();
            walk(Path::new(path), 0, &mut files, &mut seen)?;
            if files.is_empty() {
                return Err(InputError::Empty {
                    path: path.clone(),
                    what: "no .yaml, .yml or .json files in this directory".into(),
                });
            }
            for f in files {
                let name = f.to_string_lossy().into_owned();
                let bytes = fs::read(&f).map_err(|e| io_error(&name, &e))?;
                let text = decode_text(&name, bytes)?;
                out.push(Source {
                    name,
                    text,
                    explicit: false,
                });
            }
        } else {
            let bytes = fs::read(path).map_err(|e| io_error(path, &e))?;
            out.push(Source {
                name: path.clone(),
                text: decode_text(path, bytes)?,
                explicit: true,
            });
        }
    }
    Ok(out)
}

fn is_manifest(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e.to_ascii_lowercase().as_str(), "yaml" | "yml" | "json"))
}

/// Collects manifest files under `dir`, sorted by path; hidden entries (`.git`, editor swap
/// files) are skipped.
fn walk(
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    seen: &mut BTreeSet<PathBuf>,
) -> Result<(), InputError> {
    let display = dir.to_string_lossy().into_owned();
    if depth > MAX_DEPTH {
        return Err(InputError::Read {
            path: display,
            message: format!("directory nesting deeper than {MAX_DEPTH} levels"),
        });
    }
    // A symlink back up the tree would otherwise recurse forever.
    if let Ok(canonical) = fs::canonicalize(dir) {
        if !seen.insert(canonical) {
            return Ok(());
        }
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| io_error(&display, &e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            !p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'))
        })
        .collect();
    entries.sort();
    for p in entries {
        match fs::metadata(&p) {
            Ok(m) if m.is_dir() => walk(&p, depth + 1, files, seen)?,
            Ok(m) if m.is_file() && is_manifest(&p) => files.push(p),
            Ok(_) => {}
            // A dangling symlink in a manifest directory is not worth failing the load over,
            // unless it looks like a manifest the user expects to be read.
            Err(e) if is_manifest(&p) => return Err(io_error(&p.to_string_lossy(), &e)),
            Err(_) => {}
        }
    }
    Ok(())
}

/// Bytes → text, with a precise reason when the input is not UTF-8 text.
pub(crate) fn decode_text(path: &str, bytes: Vec<u8>) -> Result<String, InputError> {
    let not_text = |detail: String| InputError::NotText {
        path: path.to_string(),
        detail,
    };
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) {
        return Err(not_text("the file is UTF-16 text; save it as UTF-8".into()));
    }
    if bytes.starts_with(&[0x1F, 0x8B]) {
        return Err(not_text(
            "the file is gzip-compressed; decompress it first".into(),
        ));
    }
    if let Some(pos) = bytes.iter().position(|b| *b == 0) {
        return Err(not_text(format!("binary data (NUL byte at offset {pos})")));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        not_text(format!(
            "invalid UTF-8 at byte offset {}",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_and_foreign_encodings_are_named() {
        let e = decode_text("x", vec![b'a', 0, b'b'])
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "x: not a YAML or JSON manifest: binary data (NUL byte at offset 1)"
        );
        assert!(decode_text("x", vec![0xFF, 0xFE, b'a', 0])
            .unwrap_err()
            .to_string()
            .contains("UTF-16"));
        assert!(decode_text("x", vec![b'a', 0xC3, 0x28])
            .unwrap_err()
            .to_string()
            .contains("invalid UTF-8 at byte offset 1"));
        assert!(decode_text("x", vec![0x1F, 0x8B, 8])
            .unwrap_err()
            .to_string()
            .contains("gzip"));
        assert_eq!(
            decode_text("x", "\u{feff}a: 1".as_bytes().to_vec()).unwrap(),
            "a: 1"
        );
    }
}
