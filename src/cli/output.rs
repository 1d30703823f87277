//! Rendering: aligned tables for people, versioned JSON/YAML documents for scripts — and the
//! escaping every value from a manifest, the cluster or AWS goes through on its way to a
//! terminal ([`shown`], [`one_line`], [`TerminalSafe`]): a Node named with escape codes must not
//! recolour the terminal, a newline in a name must not forge a second `error:` line, and a
//! 100 KB annotation must not become a 100 KB line.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use super::style::Style;
use super::OutputFormat;
use crate::error::redact::redact;

/// Values longer than this many characters are cut (with an ellipsis and their length).
pub const MAX_SHOWN: usize = 200;
/// Messages longer than this many characters are cut the same way.
pub const MAX_LINE: usize = 4096;

/// Control characters (C0, DEL, C1), the invisible marks that reorder text on screen (bidi
/// marks, embeddings, overrides and isolates), the zero-width characters that hide inside a
/// name (`def\u{200b}ault` looks like `default`), and the line and paragraph separators some
/// viewers break lines at.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
        )
}

/// Appends `c` as it is shown: `\n`, `\r`, `\t`, else `\u{…}` for an unsafe character.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if unsafe_char(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// Where a run of characters ends: white space, or a comma (lists such as `a,b,c` are runs
/// of short values, not one long one).
fn separator(c: char) -> bool {
    (c.is_whitespace() && !unsafe_char(c)) || c == ','
}

/// `text` escaped, its runs of characters between separators cut at `run` characters and the
/// whole at `whole`; borrowed when nothing had to change.
fn escaped(text: &str, run: usize, whole: usize) -> Cow<'_, str> {
    let mut count = 0;
    let mut longest_run = 0;
    let mut this_run = 0;
    let mut clean = true;
    for c in text.chars() {
        count += 1;
        clean &= !unsafe_char(c);
        this_run = if separator(c) { 0 } else { this_run + 1 };
        longest_run = longest_run.max(this_run);
    }
    if clean && longest_run <= run && count <= whole {
        return Cow::Borrowed(text);
    }
    let cut = |out: &mut String, length: usize| out.push_str(&format!("…({length} characters)"));
    let mut out = String::new();
    let mut kept = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if kept == whole {
            cut(&mut out, count);
            break;
        }
        if separator(c) {
            out.push(c);
            kept += 1;
            continue;
        }
        let mut word = vec![c];
        while let Some(&n) = chars.peek() {
            if separator(n) {
                break;
            }
            word.push(n);
            chars.next();
        }
        let take = word.len().min(run).min(whole - kept);
        for &w in &word[..take] {
            push_escaped(&mut out, w);
        }
        kept += take;
        if take < word.len().min(run) {
            cut(&mut out, count);
            break;
        }
        if take < word.len() {
            cut(&mut out, word.len());
        }
    }
    Cow::Owned(out)
}

/// A value from a manifest, the cluster or AWS as a terminal may show it (a table cell, a
/// `kind/name` line): control characters escaped (`\n`, `\u{1b}`), cut after [`MAX_SHOWN`]
/// characters as `abc…(102400 characters)`.
pub fn shown(value: &str) -> Cow<'_, str> {
    escaped(value, MAX_SHOWN, MAX_SHOWN)
}

/// A message that may quote such values (an error, a hint, a warning, a note) as one line:
/// control characters escaped — a newline too, so a name cannot forge a line of its own —,
/// every run of non-blank characters cut after [`MAX_SHOWN`] characters and the whole after
/// [`MAX_LINE`].
pub fn one_line(text: &str) -> Cow<'_, str> {
    escaped(text, MAX_SHOWN, MAX_LINE)
}

/// Wraps stderr: every write has its credentials [`redact`]ed and its control characters
/// other than newlines escaped, so no path to stderr — including lines written straight to it
/// — can move the cursor, recolour the terminal or show a secret.
pub struct TerminalSafe<W: Write>(pub W);

impl<W: Write> Write for TerminalSafe<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let text = redact(&text);
        if text.chars().any(|c| c != '\n' && unsafe_char(c)) {
            let mut out = String::with_capacity(text.len());
            for c in text.chars() {
                if c == '\n' {
                    out.push(c);
                } else {
                    push_escaped(&mut out, c);
                }
            }
            self.0.write_all(out.as_bytes())?;
        } else {
            self.0.write_all(text.as_bytes())?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

static OUTPUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether stdout's reader went away (`… | head -1` has read enough): the command then stops
/// at its next write and exits [`Exit::OutputClosed`](crate::error::Exit::OutputClosed),
/// quietly.
pub fn output_closed() -> bool {
    OUTPUT_CLOSED.load(Ordering::Relaxed)
}

/// Wraps stdout and notes a broken pipe for [`output_closed`].
pub struct PipeWatch<W: Write>(pub W);

impl<W: Write> PipeWatch<W> {
    fn watch<T>(result: io::Result<T>) -> io::Result<T> {
        if let Err(e) = &result {
            if e.kind() == io::ErrorKind::BrokenPipe {
                OUTPUT_CLOSED.store(true, Ordering::Relaxed);
            }
        }
        result
    }
}

impl<W: Write> Write for PipeWatch<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Self::watch(self.0.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        Self::watch(self.0.flush())
    }
}

/// The `apiVersion` of every machine-readable document this tool prints.
pub const API_VERSION: &str = "kubectl-karpenter/v1";

/// A simple aligned table (kubectl style: upper-case headers, three spaces between columns).
/// Cells are shown as [`one_line`]s (escaped, long values cut); [`mark`](Table::mark)ed cells are coloured as bad by
/// [`write_styled`](Table::write_styled) after alignment, so colour never shifts columns.
#[derive(Debug, Default)]
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
    /// (row, column) of the cells shown as bad.
    marked: Vec<(usize, usize)>,
}

impl Table {
    /// A table with these headers.
    pub fn new(headers: &[&str]) -> Self {
        Table {
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
            marked: Vec::new(),
        }
    }

    /// Adds a row (missing cells print empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.iter().map(|c| one_line(c).into_owned()).collect());
    }

    /// Shows the cell in `column` of the last row added as bad (red where colour is on).
    pub fn mark(&mut self, column: usize) {
        if let Some(row) = self.rows.len().checked_sub(1) {
            self.marked.push((row, column));
        }
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the table without colour; `headers: false` for `--no-headers`.
    pub fn write(&self, out: &mut dyn Write, headers: bool) -> io::Result<()> {
        self.write_styled(out, headers, Style::plain())
    }

    /// Writes the table with its marked cells coloured as `style` says.
    pub fn write_styled(&self, out: &mut dyn Write, headers: bool, style: Style) -> io::Result<()> {
        let columns = self.headers.len();
        let mut widths: Vec<usize> = self.headers.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let line = |cells: &[String], row: Option<usize>, out: &mut dyn Write| {
            let mut text = String::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = cells.get(i).map(String::as_str).unwrap_or("");
                let padding = if i + 1 < columns {
                    width - cell.chars().count() + 3
                } else {
                    0
                };
                if row.is_some_and(|r| self.marked.contains(&(r, i))) && !cell.is_empty() {
                    text.push_str(&style.bad(cell));
                } else {
                    text.push_str(cell);
                }
                text.push_str(&" ".repeat(padding));
            }
            writeln!(out, "{}", text.trim_end())
        };
        if headers {
            line(&self.headers, None, out)?;
        }
        for (r, row) in self.rows.iter().enumerate() {
            line(row, Some(r), out)?;
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
            // serde_json writes token by token; through a buffer of its own type each write is
            // an inlined copy instead of a call through `dyn Write` (a big plan is ~86 MB).
            // DEL and the C1 controls are escaped too (serde_json writes them raw: valid JSON,
            // but U+009B is a CSI to some terminals).
            let mut buffered =
                io::BufWriter::with_capacity(64 * 1024, JsonControls::new(&mut *out));
            serde_json::to_writer_pretty(&mut buffered, doc).map_err(io::Error::other)?;
            writeln!(buffered)?;
            buffered.flush()
        }
    }
}

/// Passes JSON text through with DEL and the C1 controls (U+0080–U+009F) written as `\u007f`,
/// `\u009b`: serde_json escapes only C0. Outside strings JSON text is ASCII, so every such
/// character is inside a string, where the escape reads back as the same character.
struct JsonControls<W: Write> {
    inner: W,
    /// The first byte of a two-byte UTF-8 character (0xC2: U+0080–U+00BF) ended the last write.
    pending: bool,
}

impl<W: Write> JsonControls<W> {
    fn new(inner: W) -> Self {
        JsonControls {
            inner,
            pending: false,
        }
    }
}

impl<W: Write> Write for JsonControls<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut start = 0;
        if std::mem::take(&mut self.pending) {
            match buf.first() {
                Some(&b @ 0x80..=0x9f) => {
                    write!(self.inner, "\\u{b:04x}")?;
                    start = 1;
                }
                _ => self.inner.write_all(&[0xc2])?,
            }
        }
        let mut i = start;
        while let Some(at) = memchr::memchr2(0x7f, 0xc2, &buf[i..]) {
            let at = i + at;
            let (code, len) = match (buf[at], buf.get(at + 1)) {
                (0x7f, _) => (0x7f, 1),
                (_, Some(&b @ 0x80..=0x9f)) => (b, 2),
                (_, Some(_)) => {
                    i = at + 1;
                    continue;
                }
                (_, None) => {
                    self.inner.write_all(&buf[start..at])?;
                    self.pending = true;
                    return Ok(buf.len());
                }
            };
            self.inner.write_all(&buf[start..at])?;
            write!(self.inner, "\\u{code:04x}")?;
            i = at + len;
            start = i;
        }
        self.inner.write_all(&buf[start..])?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.pending) {
            self.inner.write_all(&[0xc2])?;
        }
        self.inner.flush()
    }
}

/// A price as people read it.
pub fn price(usd_per_hour: f64) -> String {
    // `+ 0.0` turns a negative zero (an empty f64 sum is -0.0) into 0: never `$-0.0000`.
    format!("{:.4}", usd_per_hour + 0.0)
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
    fn an_empty_plan_costs_zero_never_minus_zero() {
        let nothing: f64 = std::iter::empty::<f64>().sum();
        assert_eq!(price(nothing), "0.0000");
        assert_eq!(price(0.204), "0.2040");
        let plan = crate::scheduling::Plan::default();
        assert_eq!(plan.price_per_hour().to_string(), "0");
    }

    #[test]
    fn values_are_escaped_and_cut() {
        assert!(matches!(shown("web-1"), Cow::Borrowed("web-1")));
        assert_eq!(
            shown("evil\u{1b}[31mred\nerror: forged\r\t\u{9b}\u{202e}"),
            "evil\\u{1b}[31mred\\nerror: forged\\r\\t\\u{9b}\\u{202e}"
        );
        let long = "x".repeat(100 * 1024);
        let got = shown(&long);
        assert_eq!(
            got,
            format!("{}…(102400 characters)", "x".repeat(MAX_SHOWN))
        );
        let line = format!("label {long} is too long");
        let got = one_line(&line);
        assert_eq!(
            got,
            format!(
                "label {}…(102400 characters) is too long",
                "x".repeat(MAX_SHOWN)
            )
        );
        assert!(matches!(one_line("a,b,c and d"), Cow::Borrowed(_)));
        let list = vec!["pod-name-0123456789"; 200].join(",");
        assert!(
            matches!(one_line(&list), Cow::Borrowed(_)),
            "a list is many short values"
        );
        let words = "a ".repeat(MAX_LINE);
        let got = one_line(&words);
        assert!(got.chars().count() < MAX_LINE + 30, "{}", got.len());
        assert!(
            got.ends_with(&format!("…({} characters)", 2 * MAX_LINE)),
            "{got}"
        );
    }

    /// Found writing the planting sweep (tests/e2e/fuzz_planted.rs): a zero-width space or a BOM in
    /// a name was shown raw (`def\u{200b}ault` looks like `default` in an error line).
    #[test]
    fn zero_width_characters_and_line_separators_are_escaped() {
        assert_eq!(
            one_line("def\u{200b}ault\u{200d}\u{2060}\u{feff} a\u{2028}error: forged"),
            "def\\u{200b}ault\\u{200d}\\u{2060}\\u{feff} a\\u{2028}error: forged"
        );
        let mut out = TerminalSafe(Vec::new());
        write!(out, "name \u{200b}x").unwrap();
        assert_eq!(String::from_utf8(out.0).unwrap(), "name \\u{200b}x");
        // Letters of any script are shown as they are.
        assert!(matches!(shown("naïve-ünïcødé-日本"), Cow::Borrowed(_)));
    }

    /// Found writing the planting sweep: `-o json` wrote DEL and U+009B (a CSI to some terminals)
    /// raw — valid JSON, but not what a terminal should be sent. Now escaped, even split across
    /// writes, and the document reads back the same.
    #[test]
    fn json_documents_escape_del_and_c1_controls() {
        let value = "a\u{7f}b\u{9b}31mc\u{85}d\u{a0}é\u{202e}\n";
        let mut out = Vec::new();
        write_document(
            &mut out,
            OutputFormat::Json,
            &serde_json::json!({ "name": value }),
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("\"a\\u007fb\\u009b31mc\\u0085d\u{a0}é\u{202e}\\n\""),
            "{text}"
        );
        assert!(
            !text.chars().any(|c| c != '\n' && c.is_control()),
            "{text:?}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["name"], value);
        // A two-byte character split across writes.
        let mut out = JsonControls::new(Vec::new());
        for chunk in [
            "\"x".as_bytes(),
            &[0xc2],
            &[0x9b],
            b"y",
            &[0xc2],
            &[0xa0],
            b"\"",
        ] {
            out.write_all(chunk).unwrap();
        }
        out.write_all(&[0xc2]).unwrap();
        out.write_all(&[0x80]).unwrap();
        out.flush().unwrap();
        assert_eq!(out.inner, "\"x\\u009by\u{a0}\"\\u0080".as_bytes());
    }

    #[test]
    fn stderr_is_written_escaped_and_redacted() {
        crate::error::redact::remember("planted-secret-for-test");
        let mut out = TerminalSafe(Vec::new());
        writeln!(out, "warning: \u{1b}]0;title\u{7} planted-secret-for-test").unwrap();
        assert_eq!(
            String::from_utf8(out.0).unwrap(),
            "warning: \\u{1b}]0;title\\u{7} [redacted]\n"
        );
    }

    #[test]
    fn table_cells_are_escaped_and_marked_cells_coloured_after_alignment() {
        let mut t = Table::new(&["NAME", "STATUS"]);
        t.row(vec!["a\u{1b}[2Jb".into(), "Ready".into()]);
        t.row(vec!["c".into(), "NotReady".into()]);
        t.mark(1);
        let mut out = Vec::new();
        t.write(&mut out, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "NAME          STATUS\na\\u{1b}[2Jb   Ready\nc             NotReady\n"
        );
        let red = Style::decide(super::super::ColorChoice::Always, false, false, false);
        let mut out = Vec::new();
        t.write_styled(&mut out, false, red).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.ends_with(&format!("c             {}\n", red.bad("NotReady"))),
            "{text:?}"
        );
    }

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
