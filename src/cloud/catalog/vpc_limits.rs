//! The VPC resource controller's per-type limits that Karpenter's AWS provider compiles in
//! (`aws v1.14.1: pkg/providers/instancetype/zz_generated.vpclimits.go` `Limits`), embedded as
//! `catalog/vpc-limits.tsv` (written by `scripts/gen_vpc_limits.py`; Apache-2.0, its header
//! names the source and its generation time).
//!
//! DescribeInstanceTypes carries neither number, so the embedded snapshot and the live catalog
//! read both from here, as Karpenter does:
//! * `vpc.amazonaws.com/pod-eni` (security groups for pods) = the branch ENIs of a
//!   trunking-compatible type, else 0 (`types.go` `awsPodENI`);
//! * on Windows, `vpc.amazonaws.com/PrivateIPv4Address` = IPv4 addresses per interface - 1 for a
//!   type the table lists, else 0 (`types.go` `privateIPv4Address`).
//!
//! A type newer than the table (not listed) gets 0 of both, as in Karpenter v1.14.1.

use std::sync::OnceLock;

/// The table, one `name\tbranch ENIs\tIPv4 per interface` line per type, sorted by name.
const EMBEDDED_VPC_LIMITS: &str = include_str!("../../../catalog/vpc-limits.tsv");

/// One type's row of `Limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct VpcLimits {
    /// `BranchInterface` when `IsTrunkingCompatible`, else 0.
    pub(crate) branch_enis: i64,
    /// `IPv4PerInterface`.
    pub(crate) ipv4_per_interface: i64,
}

/// The row of `instance_type`, if the table lists it. The table is parsed on first use.
pub(crate) fn vpc_limits(instance_type: &str) -> Option<VpcLimits> {
    let table = table();
    table
        .binary_search_by(|(name, _)| (*name).cmp(instance_type))
        .ok()
        .map(|i| table[i].1)
}

fn table() -> &'static [(&'static str, VpcLimits)] {
    static TABLE: OnceLock<Vec<(&'static str, VpcLimits)>> = OnceLock::new();
    TABLE.get_or_init(|| parse(EMBEDDED_VPC_LIMITS))
}

/// The rows of the table text; a malformed line is skipped (the embedded file is checked whole by
/// a test, so none is), and the rows are sorted for the binary search whatever the file's order.
fn parse(text: &'static str) -> Vec<(&'static str, VpcLimits)> {
    let mut rows: Vec<_> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(parse_line)
        .collect();
    rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
    rows
}

fn parse_line(line: &'static str) -> Option<(&'static str, VpcLimits)> {
    let mut fields = line.split('\t');
    let name = fields.next().filter(|n| !n.is_empty())?;
    let branch_enis = fields.next()?.parse().ok()?;
    let ipv4_per_interface = fields.next()?.parse().ok()?;
    fields.next().is_none().then_some((
        name,
        VpcLimits {
            branch_enis,
            ipv4_per_interface,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_embedded_table_parses() {
        let data_lines = EMBEDDED_VPC_LIMITS
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .count();
        assert!(data_lines > 1000, "{data_lines}");
        assert_eq!(table().len(), data_lines);
        let names: Vec<&str> = table().iter().map(|(n, _)| *n).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "unique names");
    }

    /// Rows as in `zz_generated.vpclimits.go` v1.14.1: m5.large is trunking-compatible with 9
    /// branch ENIs, t3.large is not (the provider suite's "should not launch AWS Pod ENI on a
    /// t3"), and a name the table lacks has no row.
    #[test]
    fn rows_of_the_upstream_table() {
        assert_eq!(
            vpc_limits("m5.large"),
            Some(VpcLimits {
                branch_enis: 9,
                ipv4_per_interface: 10
            })
        );
        assert_eq!(
            vpc_limits("t3.large"),
            Some(VpcLimits {
                branch_enis: 0,
                ipv4_per_interface: 12
            })
        );
        assert_eq!(vpc_limits("no-such.type"), None);
    }

    #[test]
    fn malformed_lines_are_skipped() {
        let rows = parse(
            "# header\nb.large\t3\t10\nbad\nc.large\tx\t1\nd.large\t1\t2\t3\na.large\t0\t4\n",
        );
        let names: Vec<&str> = rows.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["a.large", "b.large"]);
    }
}
