//! Public configurations swept in session 23, part 2 (docs/upstream-tests.md "Public
//! configurations swept (session 23, part 2)"), through the binary where the difference was in
//! reading the files.

use serde_json::Value;

use crate::support::{fixture, karpenter};

/// Windows pods as written select `kubernetes.io/os: windows`; EKS's VPC resource controller
/// webhook (`aws/amazon-vpc-resource-controller-k8s webhooks/core/pod_webhook.go`
/// `HandleWindowsPod`) then sets `vpc.amazonaws.com/PrivateIPv4Address: 1` on each, and
/// Karpenter v1.14.1 fits 20 of them to a Windows type with 20 secondary addresses (aws
/// `types.go` `privateIPv4Address`): one m5.4xlarge. We planned an m5.xlarge (14 addresses).
#[test]
fn windows_pods_are_fitted_to_the_ipv4_addresses_the_eks_webhook_asks_for() {
    let file = fixture("sweep9/windows-iis-ipam.yaml");
    let file = file.to_string_lossy();
    let run = karpenter(
        &[
            "provision",
            "--dry-run",
            "-f",
            &file,
            "--region",
            "us-east-1",
            "-o",
            "json",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    let claims = doc["nodeClaims"].as_array().unwrap();
    assert_eq!(claims.len(), 1, "{}", run.stdout);
    assert_eq!(claims[0]["instanceType"], "m5.4xlarge", "{}", run.stdout);
    assert_eq!(
        claims[0]["requests"]["vpc.amazonaws.com/PrivateIPv4Address"],
        "20"
    );
    assert!(
        run.stderr.contains("assuming: Windows IPAM is on"),
        "{}",
        run.stderr
    );
}
