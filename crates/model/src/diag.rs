//! Diagnostics: every user-facing error names the file, line and column and says what was
//! expected and what was found.
use serde::Serialize;
use std::fmt;

/// A position in a source file (1-based line and column).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Span {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

impl Span {
    pub fn new(file: impl Into<String>, line: u32, col: u32) -> Self {
        Span {
            file: file.into(),
            line,
            col,
        }
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = crate::text::escape_controls(&self.file);
        write!(f, "{}:{}:{}", file, self.line, self.col)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One message about a source file: `file:line:col: error: message`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, thiserror::Error)]
pub struct Diagnostic {
    pub span: Span,
    pub severity: Severity,
    pub message: String,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            severity: Severity::Error,
            message: message.into(),
        }
    }
    pub fn warning(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            severity: Severity::Warning,
            message: message.into(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        // Messages quote names and values from the file: escape what could drive a terminal.
        let msg = crate::text::escape_controls(&self.message);
        write!(f, "{}: {}: {}", self.span, sev, msg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diagnostic_quoting_file_text_prints_no_control_characters() {
        let d = Diagnostic::error(
            Span::new("evil\x1b]0;title\x07.click", 3, 1),
            "unknown element class '\x1b[2J\x1b[31mBoom'",
        );
        let s = d.to_string();
        assert!(!s.chars().any(|c| c.is_control()), "{s:?}");
        assert!(s.contains("\\x1b[31mBoom") && s.starts_with("evil\\x1b]0;title\\x07.click:3:1"));
    }
}
