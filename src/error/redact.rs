//! Credentials never reach the terminal (docs/spec.md §6): every line this tool writes to stderr — its
//! errors, notes and warnings, and the log lines of `-v` and `KUBECTL_KARPENTER_LOG`, including
//! those of kube-rs and the AWS SDK — passes through [`redact`] first.
//!
//! Two nets, because neither catches everything alone:
//! * the values themselves, [`remember`]ed where this tool reads them: the kubeconfig's tokens,
//!   passwords, client keys, auth-provider settings and exec-plugin environment, and the AWS
//!   variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`);
//! * shapes, for values it never sees (credentials the AWS SDK loads from a profile, SSO or
//!   `credential_process`; the token an exec plugin prints): AWS access key ids (`AKIA…`,
//!   `ASIA…`: the SDK's `Debug` of its identity shows them at `debug`), `Bearer …`,
//!   `authorization`/`token`/`password`/`secret`-like `key: value` pairs, and PEM private keys.

use std::borrow::Cow;
use std::sync::RwLock;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";

/// Values shorter than this are not remembered: they would blank ordinary words.
const MIN_SECRET_LEN: usize = 6;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Remembers a credential so that every later line containing it shows [`REDACTED`] instead.
pub fn remember(secret: &str) {
    let secret = secret.trim();
    if secret.chars().count() < MIN_SECRET_LEN {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(|e| e.into_inner());
    if !secrets.iter().any(|s| s == secret) {
        secrets.push(secret.to_string());
        // Longest first: a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    }
}

/// Remembers the AWS credentials of the environment (the SDK reads them; nothing prints them).
pub fn remember_environment() {
    for name in [
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        // The EKS Pod Identity / ECS container-credentials token the SDK sends.
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    ] {
        if let Ok(value) = std::env::var(name) {
            remember(&value);
        }
    }
}

/// `text` with every remembered secret and every credential-shaped value replaced.
pub fn redact(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    {
        let secrets = SECRETS.read().unwrap_or_else(|e| e.into_inner());
        for secret in secrets.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
    }
    for pass in [
        private_keys,
        access_key_ids,
        url_passwords,
        json_web_tokens,
        keyed_values,
    ] {
        if let Some(changed) = pass(&out) {
            out = Cow::Owned(changed);
        }
    }
    out
}

/// PEM private key blocks, whole.
fn private_keys(text: &str) -> Option<String> {
    const BEGIN: &str = "-----BEGIN ";
    let mut out = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(start) = rest.find(BEGIN) {
        let header_end = rest[start + BEGIN.len()..]
            .find("-----")
            .map(|i| start + BEGIN.len() + i);
        let Some(header_end) = header_end else { break };
        if !rest[start..header_end].ends_with("PRIVATE KEY") {
            out.push_str(&rest[..header_end]);
            rest = &rest[header_end..];
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(REDACTED);
        changed = true;
        // To the end of the matching END line, or of the text when it is cut off.
        let end = rest[header_end..]
            .find("-----END ")
            .and_then(|i| {
                let from = header_end + i + "-----END ".len();
                rest[from..].find("-----").map(|j| from + j + "-----".len())
            })
            .unwrap_or(rest.len());
        rest = &rest[end..];
    }
    changed.then(|| {
        out.push_str(rest);
        out
    })
}

/// AWS access key ids: a known 4-letter prefix and 16 upper-case letters or digits.
fn access_key_ids(text: &str) -> Option<String> {
    const PREFIXES: [&str; 6] = ["AKIA", "ASIA", "AIDA", "AROA", "ABIA", "ACCA"];
    let bytes = text.as_bytes();
    let key_char = |b: u8| b.is_ascii_uppercase() || b.is_ascii_digit();
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    while i + 20 <= bytes.len() {
        let boundary = i == 0 || !bytes[i - 1].is_ascii_alphanumeric();
        if boundary
            && PREFIXES
                .iter()
                .any(|p| bytes[i..].starts_with(p.as_bytes()))
            && bytes[i + 4..i + 20].iter().all(|b| key_char(*b))
        {
            let mut end = i + 20;
            while end < bytes.len() && key_char(bytes[end]) {
                end += 1;
            }
            out.push_str(&text[last..i]);
            out.push_str(REDACTED);
            last = end;
            i = end;
        } else {
            i += 1;
        }
    }
    (last > 0).then(|| {
        out.push_str(&text[last..]);
        out
    })
}

/// The password of a URL's user information (`http://user:password@proxy:3128`: an
/// `HTTPS_PROXY` the AWS SDK or a transport error may quote), whatever the scheme.
fn url_passwords(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut last = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let start = from + found + 3;
        let authority_end = text[start..]
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>') || c.is_whitespace()
            })
            .map_or(text.len(), |e| start + e);
        from = authority_end;
        let Some(at) = text[start..authority_end].rfind('@').map(|a| start + a) else {
            continue;
        };
        let Some(colon) = text[start..at].find(':').map(|c| start + c) else {
            continue;
        };
        if colon + 1 == at || text[colon + 1..at] == *REDACTED {
            continue;
        }
        out.push_str(&text[last..colon + 1]);
        out.push_str(REDACTED);
        last = at;
    }
    (last > 0).then(|| {
        out.push_str(&text[last..]);
        out
    })
}

/// JSON Web Tokens — a ServiceAccount token, an EKS Pod Identity or web-identity token, an OIDC
/// id-token — by their shape: `eyJ…` (a JSON header, base64url), three dot-separated parts.
fn json_web_tokens(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let part = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    while let Some(found) = text[i..].find("eyJ") {
        let start = i + found;
        i = start + 3;
        if start > 0 && part(bytes[start - 1]) {
            continue;
        }
        // Three parts of at least 8 characters, joined by dots (the last may be cut off).
        let mut end = start;
        let mut parts = 0;
        loop {
            let len = bytes[end..].iter().take_while(|b| part(**b)).count();
            if len < 8 {
                break;
            }
            end += len;
            parts += 1;
            if parts == 3 || bytes.get(end) != Some(&b'.') {
                break;
            }
            end += 1;
        }
        if parts < 2 {
            continue;
        }
        out.push_str(&text[last..start]);
        out.push_str(REDACTED);
        last = end;
        i = end;
    }
    (last > 0).then(|| {
        out.push_str(&text[last..]);
        out
    })
}

/// Names whose value is a credential when followed by `:` or `=` (or, for `bearer`, a space),
/// matched case-insensitively at the end of a word (`x-amz-security-token`, `client_key_data`).
const KEYS: [&str; 9] = [
    "authorization",
    "bearer",
    "token",
    "password",
    "secret",
    "secret_access_key",
    "secretaccesskey",
    "key-data",
    "key_data",
];

/// `key: value` / `key=value` / `"key":"value"` / `Bearer value` with a credential-like key.
fn keyed_values(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase().into_bytes();
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    let mut i = 0;
    while i < bytes.len() {
        let longest = KEYS
            .iter()
            .filter(|k| lower[i..].starts_with(k.as_bytes()))
            .max_by_key(|k| k.len());
        let Some(key) = longest else {
            i += 1;
            continue;
        };
        let after_key = i + key.len();
        // The key ends a word: `tokens` or `passwordless` are not keys.
        if bytes
            .get(after_key)
            .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
        {
            i += 1;
            continue;
        }
        // An XML element (`<SecretAccessKey>…<`, `<SessionToken>`: STS and IMDS answers in the
        // SDK's trace of a response body): the name opens a tag.
        let word_start = bytes[..i]
            .iter()
            .rposition(|b| !b.is_ascii_alphanumeric())
            .map_or(0, |p| p + 1);
        let xml = word_start > 0 && bytes[word_start - 1] == b'<';
        let Some(value_start) = value_start(bytes, after_key, *key == "bearer", xml) else {
            i = after_key;
            continue;
        };
        let value_end = value_end(bytes, value_start);
        if value_end == value_start || text[value_start..value_end] == *REDACTED {
            i = value_end.max(after_key);
            continue;
        }
        out.push_str(&text[last..value_start]);
        out.push_str(REDACTED);
        last = value_end;
        i = value_end;
    }
    (last > 0).then(|| {
        out.push_str(&text[last..]);
        out
    })
}

/// Where the value after a key starts: past a closing quote, a `:` or `=` (or one space for
/// `Bearer`), spaces, an opening quote and a `Some(`.
fn value_start(bytes: &[u8], mut at: usize, bearer: bool, xml: bool) -> Option<usize> {
    at = past_quote(bytes, at);
    match bytes.get(at) {
        Some(b':' | b'=') => at += 1,
        Some(b'>') if xml => at += 1,
        Some(b' ') if bearer => at += 1,
        _ => return None,
    }
    while bytes.get(at) == Some(&b' ') {
        at += 1;
    }
    if bytes[at.min(bytes.len())..].starts_with(b"Some(") {
        at += "Some(".len();
    }
    at = past_quote(bytes, at);
    // `Bearer` inside an `authorization: Bearer x` value: the value is what follows it.
    let rest = &bytes[at.min(bytes.len())..];
    if rest.len() > 7 && rest[..7].eq_ignore_ascii_case(b"bearer ") {
        at += 7;
    }
    (at < bytes.len()).then_some(at)
}

/// Past a quote at `at`, also an escaped one (`\"` of JSON quoted in a `Debug`).
fn past_quote(bytes: &[u8], at: usize) -> usize {
    match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'\\'), Some(b'"')) => at + 2,
        (Some(b'"' | b'\''), _) => at + 1,
        _ => at,
    }
}

/// The value runs to a quote, a backslash, a separator, a tag or white space.
fn value_end(bytes: &[u8], start: usize) -> usize {
    bytes[start..]
        .iter()
        .position(|b| {
            b.is_ascii_whitespace()
                || matches!(
                    b,
                    b'"' | b'\'' | b'\\' | b',' | b';' | b'&' | b')' | b'}' | b'<'
                )
        })
        .map_or(bytes.len(), |p| start + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_values_are_replaced_wherever_they_appear() {
        remember("s3cr3t-value-for-test");
        remember("abc"); // too short to remember
        assert_eq!(
            redact("error: x s3cr3t-value-for-testy abc"),
            "error: x [redacted]y abc"
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
    }

    #[test]
    fn access_key_ids_are_replaced() {
        let line = r#"Credentials { provider_name: "Env", access_key_id: "AKIAIOSFODNN7EXAMPLE", secret_access_key: "** redacted **" }"#;
        let got = redact(line);
        assert!(!got.contains("AKIAIOSFODNN7EXAMPLE"), "{got}");
        assert!(got.contains("provider_name"), "{got}");
        assert_eq!(
            redact("Credential=ASIAIOSFODNN7EXAMPLE/20240101/us-east-1/ec2"),
            "Credential=[redacted]/20240101/us-east-1/ec2"
        );
        assert_eq!(
            redact("XAKIAIOSFODNN7EXAMPLE"),
            "XAKIAIOSFODNN7EXAMPLE",
            "inside a word"
        );
        assert_eq!(redact("AKIA-short"), "AKIA-short");
    }

    #[test]
    fn credential_shaped_pairs_are_replaced() {
        for (text, want) in [
            (
                "authorization: Bearer eyJhbGciOi.x.y",
                "authorization: Bearer [redacted]",
            ),
            (
                r#"{"token":"abc123456","kind":"ExecCredential"}"#,
                r#"{"token":"[redacted]","kind":"ExecCredential"}"#,
            ),
            (
                r#"status: Some(ExecCredentialStatus { token: Some("abc123456") })"#,
                r#"status: Some(ExecCredentialStatus { token: Some("[redacted]") })"#,
            ),
            (
                "x-amz-security-token=FQoGZXIvYXdzE&X-Amz-Date=1",
                "x-amz-security-token=[redacted]&X-Amz-Date=1",
            ),
            ("password=hunter22 user=bob", "password=[redacted] user=bob"),
            (
                "client-key-data: LS0tLS1CRUdJTg==",
                "client-key-data: [redacted]",
            ),
            ("Bearer abcdef", "Bearer [redacted]"),
            (
                r#"stdout: "{\"token\":\"abc123456\"}\n""#,
                r#"stdout: "{\"token\":\"[redacted]\"}\n""#,
            ),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
        for plain in [
            "the token expired",
            "tokens: 3",
            "passwordless login",
            "no secret here",
            "authorization failed: 403",
        ] {
            assert_eq!(redact(plain), plain);
        }
    }

    /// Issue 13, secrets in new places: an STS/IMDS answer's XML in the SDK's trace of a
    /// response body, a proxy URL with a password, and JSON Web Tokens (ServiceAccount, Pod
    /// Identity, web identity) wherever they appear whole.
    #[test]
    fn xml_credentials_url_passwords_and_json_web_tokens_are_replaced() {
        for (text, want) in [
            (
                "b\"<Credentials><AccessKeyId>x</AccessKeyId><SecretAccessKey>wJalrXUtnFEMI/K7MDENG</SecretAccessKey><SessionToken>FwoGZXIvYXdzEBY=</SessionToken></Credentials>\"",
                "b\"<Credentials><AccessKeyId>x</AccessKeyId><SecretAccessKey>[redacted]</SecretAccessKey><SessionToken>[redacted]</SessionToken></Credentials>\"",
            ),
            (
                "error trying to connect: proxy http://bob:hunter22@proxy.corp:3128/ refused",
                "error trying to connect: proxy http://bob:[redacted]@proxy.corp:3128/ refused",
            ),
            (
                "HTTPS_PROXY=socks5://u:p%40ss@10.0.0.1:1080",
                "HTTPS_PROXY=socks5://u:[redacted]@10.0.0.1:1080",
            ),
            (
                "jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2lnbmF0dXJlLXBhcnQ rejected",
                "jwt [redacted] rejected",
            ),
            (
                "cut eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0",
                "cut [redacted]",
            ),
        ] {
            assert_eq!(redact(text), want, "{text}");
        }
        for plain in [
            "https://api.example.com:6443/api/v1/nodes",
            "ssh://git@github.com/x",
            "<Token>",
            "Greater than: a > b",
            "eyJust a word",
        ] {
            assert_eq!(redact(plain), plain);
        }
    }

    #[test]
    fn private_keys_are_replaced_whole() {
        let pem =
            "key -----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY----- done";
        assert_eq!(redact(pem), "key [redacted] done");
        let cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
        assert_eq!(redact(cert), cert, "certificates are public");
        assert_eq!(
            redact("-----BEGIN PRIVATE KEY-----\nMIGH"),
            "[redacted]",
            "cut off"
        );
    }
}
