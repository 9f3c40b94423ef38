//! How a failed command's message is shown: kubectl's `error: …`, once.

/// The prefix a front end prints before a failed command's message: `error: `, or nothing
/// when the message already says it is an error. kubectl prints an API server's refusal as
/// it comes (`Error from server (NotFound): pods "x" not found`, no `error: ` before it),
/// and a message that starts with `error: ` has its prefix already. A failed command's
/// [`crate::LabError::prefix`] knows more: any API status (`The Pod "x" is invalid: …`).
pub fn error_prefix(message: &str) -> &'static str {
    if message.starts_with("Error from server (") || message.starts_with("error: ") {
        ""
    } else {
        "error: "
    }
}

/// `message` as a front end shows it: [`error_prefix`], then the message.
pub fn error_text(message: &str) -> String {
    format!("{}{message}", error_prefix(message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_is_printed_once() {
        assert_eq!(
            error_text("Error from server (NotFound): pods \"x\" not found"),
            "Error from server (NotFound): pods \"x\" not found"
        );
        assert_eq!(
            error_text("error: unbalanced quotes"),
            "error: unbalanced quotes"
        );
        assert_eq!(
            error_text("unknown command \"x\""),
            "error: unknown command \"x\""
        );
        // Only at the start: a message that quotes one keeps its own prefix.
        assert_eq!(
            error_text("error when applying pod/web: Error from server (Conflict): …"),
            "error: error when applying pod/web: Error from server (Conflict): …"
        );
    }
}
