//! The per-type network bandwidth Karpenter's AWS provider compiles in (`aws v1.14.1:
//! pkg/providers/instancetype/zz_generated.bandwidth.go` `InstanceTypeBandwidthMegabits`),
//! embedded as `catalog/network-bandwidth.tsv` (written by `scripts/gen_network_bandwidth.py`;
//! Apache-2.0, its header names the source).
//!
//! `karpenter.k8s.aws/instance-network-bandwidth` is this table's value (`types.go`
//! `computeRequirements`), for the embedded and the live catalog alike: DescribeInstanceTypes'
//! own figures are not read. A type the table lacks — older generations whose documented
//! bandwidth is vague ("Moderate"), types newer than the table — has no such label.

use std::sync::OnceLock;

/// The table, one `name\tmegabits` line per type.
const EMBEDDED_NETWORK_BANDWIDTH: &str = include_str!("../../../catalog/network-bandwidth.tsv");

/// The bandwidth of `instance_type` in megabits per second, if the table lists it. The table is
/// parsed on first use.
pub(crate) fn network_bandwidth_mbps(instance_type: &str) -> Option<i64> {
    let table = table();
    table
        .binary_search_by(|(name, _)| (*name).cmp(instance_type))
        .ok()
        .map(|i| table[i].1)
}

fn table() -> &'static [(&'static str, i64)] {
    static TABLE: OnceLock<Vec<(&'static str, i64)>> = OnceLock::new();
    TABLE.get_or_init(|| parse(EMBEDDED_NETWORK_BANDWIDTH))
}

/// The rows of the table text, sorted for the binary search; a malformed line is skipped (the
/// embedded file is checked whole by a test, so none is).
fn parse(text: &'static str) -> Vec<(&'static str, i64)> {
    let mut rows: Vec<(&str, i64)> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let (name, mbps) = l.split_once('\t')?;
            Some((name, mbps.parse().ok()?)).filter(|(n, _)| !n.is_empty())
        })
        .collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_embedded_table_parses() {
        let data_lines = EMBEDDED_NETWORK_BANDWIDTH
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count();
        assert!(data_lines > 1000, "{data_lines}");
        assert_eq!(table().len(), data_lines);
        assert!(table().windows(2).all(|w| w[0].0 < w[1].0), "unique names");
    }

    /// Rows of `zz_generated.bandwidth.go` v1.14.1: m5.large 750 (the provider suite's
    /// "should support individual instance type labels" reads g4dn.8xlarge's 50000); m4.large
    /// is only a comment there ("vague bandwidth information, bandwidth is Moderate").
    #[test]
    fn rows_of_the_upstream_table() {
        assert_eq!(network_bandwidth_mbps("m5.large"), Some(750));
        assert_eq!(network_bandwidth_mbps("g4dn.8xlarge"), Some(50000));
        assert_eq!(network_bandwidth_mbps("m4.large"), None);
        assert_eq!(network_bandwidth_mbps("no-such.type"), None);
        assert_eq!(
            parse("# h\nb.large\t3\nbad\nc.large\tx\n\ta\t1\na.large\t4\n"),
            [("a.large", 4), ("b.large", 3)]
        );
    }
}
