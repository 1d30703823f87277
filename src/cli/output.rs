//! Rendering: aligned tables for people, versioned JSON/YAML documents for scripts.

use std::io::{self, Write};

use serde::Serialize;

use super::OutputFormat;

/// The `apiVersion` of every machine-readable document this tool prints.
pub const API_VERSION: &str = "kubectl-karpenter/v1";

/// A simple aligned table (kubectl style: upper-case headers, two spaces between columns).
#[derive(Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these headers.
    pub fn new(headers: &[&str]) -> Self {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row (missing cells print empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the table; `headers: false` for `--no-headers`.
    pub fn write(&self, out: &mut dyn Write, headers: bool) -> io::Result<()> {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |cells: &[String], out: &mut dyn Write| -> io::Result<()> {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                text.push_str(cell);
                if i + 1 < columns {
                    text.push_str(&" ".repeat(width - cell.chars().count() + 3));
                }
            }
            writeln!(out, "{}", text.trim_end())
        };
        if headers {
            line(&self.headers, out)?;
        }
        for row in &self.rows {
            line(row, out)?;
        }
        Ok(())
    }
}

/// Writes a document as JSON (pretty, trailing newline) or YAML.
pub fn write_document<T: Serialize>(
    out: &mut dyn Write,
    format: OutputFormat,
    doc: &T,
) -> io::Result<()> {
    match format {
        OutputFormat::Yaml => {
            let text = crate::api::yaml::to_string(doc).map_err(io::Error::other)?;
            out.write_all(text.as_bytes())
        }
        _ => {
            serde_json::to_writer_pretty(&mut *out, doc).map_err(io::Error::other)?;
            writeln!(out)
        }
    }
}

/// A price as people read it.
pub fn price(usd_per_hour: f64) -> String {
    format!("{usd_per_hour:.4}")
}

/// kubectl's age (`HumanDuration`): `45s`, `5m30s`, `42m`, `5h12m`, `20h`, `3d4h`, `41d`, `2y5d`.
pub fn kubectl_age(seconds: i64) -> String {
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 3 * 60 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let d = (hours / 24) % 365;
        return if d == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{d}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_and_drop_trailing_spaces() {
        let mut t = Table::new(&["NAME", "TYPE"]);
        t.row(vec!["a".into(), "c6a.2xlarge".into()]);
        t.row(vec!["longer-name".into(), "".into()]);
        let mut out = Vec::new();
        t.write(&mut out, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME          TYPE\na             c6a.2xlarge\nlonger-name\n"
        );
    }
}
