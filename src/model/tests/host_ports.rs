//! `core: pkg/scheduling/hostportusage_test.go` (v1.14.1), `Describe("HostPortUsage")` ›
//! `Context("entry type UT")`: when two host-port bindings collide (`HostPort.Matches`).

use crate::model::pod::HostPort;

fn port(ip: &str, port: i32, protocol: &str) -> HostPort {
    HostPort {
        ip: ip.to_string(),
        port,
        protocol: protocol.to_string(),
    }
}

/// "String() output".
#[test]
fn hostportusage_test_string() {
    assert_eq!(
        port("10.0.0.0", 4443, "TCP").to_string(),
        "IP=10.0.0.0 Port=4443 Proto=TCP"
    );
}

/// "identical entries match", "if any one IP has an unspecified IPv4 or IPv6 address, they
/// match", "mismatched protocols don't match", "mismatched ports don't match"; each checked
/// both ways round. Beyond upstream's Its: IPs compare as addresses (Go's `net.IP.Equal`), so
/// an IPv4-mapped IPv6 address is the IPv4 one.
#[test]
fn hostportusage_test_matches() {
    let base = port("10.0.0.0", 4443, "TCP");
    let table: [(&str, HostPort, bool); 9] = [
        ("identical entries match", base.clone(), true),
        ("unspecified IPv4", port("0.0.0.0", 4443, "TCP"), true),
        ("unspecified IPv6", port("::", 4443, "TCP"), true),
        (
            "mismatched protocols",
            port("10.0.0.0", 4443, "SCTP"),
            false,
        ),
        ("mismatched ports", port("10.0.0.0", 443, "TCP"), false),
        ("another IP", port("10.0.0.1", 4443, "TCP"), false),
        (
            "unspecified IP, another port",
            port("0.0.0.0", 443, "TCP"),
            false,
        ),
        (
            "IPv4-mapped IPv6",
            port("::ffff:10.0.0.0", 4443, "TCP"),
            true,
        ),
        (
            "IPv6 zero, written long",
            port("0:0:0:0:0:0:0:0", 4443, "TCP"),
            true,
        ),
    ];
    for (case, other, want) in table {
        assert_eq!(base.conflicts(&other), want, "{case}");
        assert_eq!(other.conflicts(&base), want, "{case}, reversed");
    }
}
