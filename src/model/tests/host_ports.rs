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

/// `HostPort.Matches` on addresses Go's `net.ParseIP` cannot read (`GetHostPorts` keeps its nil
/// `IP`): two nil addresses are `Equal`, so two such bindings of one port collide whatever their
/// text; one against a real address collides only if that one is unspecified. The API server
/// refuses such a `hostIP`; an offline manifest can carry one. Found by s31-linereq (we compared
/// the text).
#[test]
fn hostportusage_unreadable_addresses_match_as_go_nil() {
    let table: [(&str, &str, bool); 5] = [
        ("not-an-ip", "also-not", true),
        ("not-an-ip", "not-an-ip", true),
        ("not-an-ip", "10.0.0.1", false),
        ("not-an-ip", "0.0.0.0", true),
        ("010.0.0.1", "10.0.0.1", false),
    ];
    for (a, b, want) in table {
        let (a, b) = (port(a, 80, "TCP"), port(b, 80, "TCP"));
        assert_eq!(a.conflicts(&b), want, "{a} vs {b}");
        assert_eq!(b.conflicts(&a), want, "{b} vs {a}");
    }
}
