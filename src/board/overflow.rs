//! Whether a provider error is a context overflow. pi recovers from those by summarizing the
//! conversation (a `compaction` entry) and retrying, which takes as long as the summary does,
//! not its 2 s / 4 s / 8 s backoff. The phrases follow the providers' messages that pi 1.6.0
//! itself treats as overflow (pi-ai `utils/overflow`), matched case-insensitively as substrings.

const OVERFLOW: &[&str] = &[
    "prompt is too long",
    "prompt too long",
    "prompt exceeds max length",
    "request_too_large",
    "input is too long for requested model",
    "exceeds the context window",
    "maximum context length",
    "context window exceeded",
    "maximum prompt length is",
    "reduce the length of the messages",
    "maximum allowed input length",
    "is longer than the model's context length",
    "is longer than the models context length",
    "exceeds the limit of",
    "exceeds the available context size",
    "greater than the context length",
    "context window exceeds limit",
    "exceeded model token limit",
    "but the configured context size is",
    "model_context_window_exceeded",
    "range of input length should be",
    "context_length_exceeded",
    "context length exceeded",
    "too many tokens",
    "token limit exceeded",
];

/// Rate limits and outages that happen to mention tokens are not overflows.
const NOT_OVERFLOW: &[&str] = &["rate limit", "too many requests"];
const NOT_OVERFLOW_PREFIX: &[&str] = &["throttling error:", "service unavailable:"];

/// Is this `errorMessage` a context overflow (including an HTTP 413 request-size refusal)?
pub(crate) fn is_overflow_error(message: &str) -> bool {
    let m = message.to_lowercase();
    if NOT_OVERFLOW.iter().any(|p| m.contains(p))
        || NOT_OVERFLOW_PREFIX.iter().any(|p| m.starts_with(p))
    {
        return false;
    }
    if OVERFLOW.iter().any(|p| m.contains(p)) {
        return true;
    }
    if m.contains("input token count") && m.contains("exceeds the maximum") {
        return true;
    }
    // HTTP 413 as pi formats it: "413 …", "413: …", or "<provider> API error (413): …".
    m.strip_prefix("413")
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', ':']))
        || m.contains(" api error (413):")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_overflow_messages_are_recognised() {
        for m in [
            "prompt is too long: 213462 tokens > 200000 maximum",
            "400: {\"error\":{\"message\":\"This model's maximum context length is 128000 tokens\"}}",
            "Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "413 {\"error\":{\"type\":\"request_too_large\"}}",
            "github-copilot API error (413): {\"message\":\"failed to parse request\"}",
            "the request exceeds the available context size, try increasing it",
        ] {
            assert!(is_overflow_error(m), "{m}");
        }
        for m in [
            "500: {\"message\":\"fake 500 #2\",\"type\":\"server_error\"}",
            "429: Rate limit reached: too many tokens per minute",
            "Throttling error: too many tokens",
            "Operation aborted",
            "4130 things",
        ] {
            assert!(!is_overflow_error(m), "{m}");
        }
    }
}
