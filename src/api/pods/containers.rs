//! The API server's rules for a pod's containers and its restart policy
//! (`k8s.io/kubernetes pkg/apis/core/validation/validation.go` `validateContainers`,
//! `validateInitContainers`, `validateContainerPorts`, `validateHostNetwork`,
//! `validateRestartPolicy`), checked before the pod is read, so a manifest `kubectl apply`
//! refuses is refused here with the field it names.

use std::collections::BTreeSet;

use crate::api::core::{Container, PodSpec};
use crate::api::error::{Ctx, InputError};
use crate::api::validate;

/// Every pod's restart policies (`Always` is the default).
const RESTART_POLICIES: [&str; 3] = ["Always", "OnFailure", "Never"];

/// At least one container; every container named with a DNS label, no two alike (init
/// containers included); an init container's `restartPolicy` only `Always` (a sidecar); the
/// ports' rules; the pod's `restartPolicy` one of Always, OnFailure, Never; its `nodeName` a
/// node's name.
pub(super) fn check_containers(ctx: &Ctx, path: &str, spec: &PodSpec) -> Result<(), InputError> {
    if spec.containers.as_ref().is_none_or(Vec::is_empty) {
        return Err(ctx.invalid(
            format!("{path}.containers"),
            "required: a pod needs at least one container",
        ));
    }
    if let Some(policy) = spec.restart_policy.as_deref() {
        if !RESTART_POLICIES.contains(&policy) {
            return Err(ctx.invalid(
                format!("{path}.restartPolicy"),
                format!("unsupported value {policy:?} (expected Always, OnFailure or Never)"),
            ));
        }
    }
    // `ValidatePodSpec`: `ValidateNodeName` (a DNS subdomain).
    if let Some(node) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        if let Some(problem) = validate::object_name_problem("Node", node) {
            return Err(ctx.invalid(format!("{path}.nodeName"), problem));
        }
    }
    let host_network = spec.host_network == Some(true);
    let mut seen = BTreeSet::new();
    let lists = [
        ("initContainers", &spec.init_containers),
        ("containers", &spec.containers),
    ];
    for (field, list) in lists {
        for (i, c) in list.iter().flatten().enumerate() {
            let at = format!("{path}.{field}[{i}]");
            let name = c.name.as_deref().unwrap_or("");
            if let Some(problem) = container_name_problem(name) {
                return Err(ctx.invalid(format!("{at}.name"), problem));
            }
            if !seen.insert(name) {
                return Err(ctx.invalid(
                    format!("{at}.name"),
                    format!("duplicate container name {name:?}"),
                ));
            }
            if field == "initContainers" {
                if let Some(policy) = c.restart_policy.as_deref().filter(|p| *p != "Always") {
                    return Err(ctx.invalid(
                        format!("{at}.restartPolicy"),
                        format!(
                            "unsupported value {policy:?} (an init container's may only be Always)"
                        ),
                    ));
                }
            }
            ports(ctx, &at, c, host_network)?;
        }
    }
    Ok(())
}

/// A container's name: required, a DNS label (`IsDNS1123Label`).
fn container_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("required".into());
    }
    let b = name.as_bytes();
    let ok = b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    (!ok).then(|| {
        format!("{name:?} is not a valid name: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters")
    })
}

/// `validateContainerPorts` and `validateHostNetwork`: each named port's name an IANA service
/// name, unique in its container; `containerPort` (and `hostPort` when set) 1–65535; the
/// protocol TCP, UDP or SCTP; with host networking, a `hostPort` equal to its `containerPort`.
fn ports(ctx: &Ctx, at: &str, c: &Container, host_network: bool) -> Result<(), InputError> {
    let mut names = BTreeSet::new();
    for (j, p) in c.ports.iter().flatten().enumerate() {
        let pat = format!("{at}.ports[{j}]");
        if let Some(name) = p.name.as_deref().filter(|n| !n.is_empty()) {
            if let Some(problem) = port_name_problem(name) {
                return Err(ctx.invalid(format!("{pat}.name"), problem));
            }
            if !names.insert(name) {
                return Err(ctx.invalid(
                    format!("{pat}.name"),
                    format!("duplicate port name {name:?}"),
                ));
            }
        }
        let container_port = p.container_port.unwrap_or(0);
        if !(1..=65535).contains(&container_port) {
            return Err(ctx.invalid(
                format!("{pat}.containerPort"),
                format!("must be between 1 and 65535, got {container_port}"),
            ));
        }
        if let Some(protocol) = p.protocol.as_deref() {
            if !matches!(protocol, "TCP" | "UDP" | "SCTP") {
                return Err(ctx.invalid(
                    format!("{pat}.protocol"),
                    format!("unknown protocol {protocol:?} (expected TCP, UDP or SCTP)"),
                ));
            }
        }
        let host_port = p.host_port.unwrap_or(0);
        if host_network && host_port != 0 && host_port != container_port {
            return Err(ctx.invalid(
                format!("{pat}.hostPort"),
                format!("must match containerPort ({container_port}) when hostNetwork is true"),
            ));
        }
    }
    Ok(())
}

/// `IsValidPortName`: at most 15 lowercase letters, digits and '-', at least one letter, no
/// '-' at either end or twice in a row.
fn port_name_problem(name: &str) -> Option<String> {
    let ok = name.len() <= 15
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    (!ok).then(|| {
        format!("{name:?} is not a valid port name: at most 15 lowercase letters, digits and '-', with at least one letter, no '-' at either end or twice in a row")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `k8s.io/apimachinery pkg/util/validation/validation_test.go` `TestIsValidPortName`.
    #[test]
    fn port_names_are_iana_service_names() {
        for ok in [
            "telnet",
            "re-mail-ck",
            "pop3",
            "a",
            "a-1",
            "1-a",
            "a-1-b-2-c",
            "1-a-2-b-3",
        ] {
            assert_eq!(port_name_problem(ok), None, "{ok}");
        }
        for bad in [
            "longerthan15characters",
            "",
            "12345",
            "1-2-3-4",
            "-begin",
            "end-",
            "two--hyphens",
            "whois++",
        ] {
            if bad.is_empty() {
                continue;
            }
            assert!(port_name_problem(bad).is_some(), "{bad}");
        }
    }
}
