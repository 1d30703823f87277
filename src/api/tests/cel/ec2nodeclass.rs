//! `aws v1.14.1: pkg/apis/v1/ec2nodeclass_validation_cel_test.go` ("CEL/Validation"), against
//! the v1 EC2NodeClass CRD (`tests/fixtures/crds/v1/karpenter.k8s.aws_ec2nodeclasses.yaml`).
//! Upstream's base object, as a manifest. Go leaves out an empty string or map (`omitempty`):
//! upstream's `Role: ""` and `Tags: map[string]string{}` are absent fields here.

use super::{borrowed, check, Accepted, Case, Owned, Refused};

const BASE: &str = "apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: cel}
spec:
  amiFamily: AL2023
  amiSelectorTerms: [{alias: al2023@latest}]
  role: role-1
  securityGroupSelectorTerms: [{tags: {'*': '*'}}]
  subnetSelectorTerms: [{tags: {'*': '*'}}]
";

const FAMILIES: [&str; 6] = [
    "AL2",
    "AL2023",
    "Bottlerocket",
    "Windows2019",
    "Windows2022",
    "Windows2025",
];

/// The top-level Its, Contexts "UserData", "AMIFamily", "Tags" and "Role Immutability" (its
/// three update Its are n.a.: this tool never updates a stored object).
#[test]
fn identity_families_and_tags() {
    let mut owned: Vec<Owned> = Vec::new();
    for family in FAMILIES.iter().chain(&["Custom"]) {
        owned.push((format!("should succeed with valid families: {family}"), format!("{{spec: {{amiSelectorTerms: [{{id: ami-0123456789abcdef}}], amiFamily: {family}}}}}"), Accepted));
    }
    for family in FAMILIES {
        let alias = format!("{}@latest", family.to_lowercase());
        owned.push((format!("should succeed when the amiFamily matches amiSelectorTerms[].alias: {family} {alias}"), format!("{{spec: {{amiSelectorTerms: [{{alias: {alias}}}], amiFamily: {family}}}}}"), Accepted));
        owned.push((format!("should succeed when the amiFamily is custom with amiSelectorTerms[].alias: {alias}"), format!("{{spec: {{amiSelectorTerms: [{{alias: {alias}}}], amiFamily: Custom}}}}"), Accepted));
        for other in FAMILIES.iter().filter(|f| **f != family) {
            let alias = format!("{}@latest", other.to_lowercase());
            owned.push((format!("should fail when then amiFamily does not match amiSelectorTerms[].alias: {family} {alias}"), format!("{{spec: {{amiSelectorTerms: [{{alias: {alias}}}], amiFamily: {family}}}}}"), Refused("spec.amiFamily")));
        }
    }
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        ("should succeed if just specifying role", "{}", Accepted),
        ("should succeed if just specifying instance profile", "{spec: {instanceProfile: test-instance-profile, role: null}}", Accepted),
        ("should fail if specifying both instance profile and role", "{spec: {instanceProfile: test-instance-profile}}", Refused("spec")),
        ("should fail if not specifying one of instance profile and role", "{spec: {role: null}}", Refused("spec")),
        ("should succeed if user data is empty", "{}", Accepted),
        ("should fail with the ubuntu family", "{spec: {amiSelectorTerms: [{id: ami-0123456789abcdef}], amiFamily: Ubuntu}}", Refused("spec.amiFamily")),
        ("should fail when neither amiFamily nor an alias are specified", "{spec: {amiSelectorTerms: [{id: ami-01234567890abcdef}], amiFamily: null}}", Refused("spec.amiFamily")),
        ("should succeed when tags are empty", "{spec: {tags: {}}}", Accepted),
        ("should succeed if tags aren't in restricted tag keys", "{spec: {tags: {karpenter.sh/custom-key: value, karpenter.sh/managed: 'true', kubernetes.io/role/key: value}}}", Accepted),
        ("should fail if tags contain a restricted domain key: karpenter.sh/nodepool", "{spec: {tags: {karpenter.sh/nodepool: value}}}", Refused("spec.tags")),
        ("should fail if tags contain a restricted domain key: kubernetes.io/cluster/test", "{spec: {tags: {kubernetes.io/cluster/test: value}}}", Refused("spec.tags")),
        ("should fail if tags contain a restricted domain key: eks:eks-cluster-name", "{spec: {tags: {'eks:eks-cluster-name': test}}}", Refused("spec.tags")),
        ("should fail if tags contain a restricted domain key: karpenter.k8s.aws/ec2nodeclass", "{spec: {tags: {karpenter.k8s.aws/ec2nodeclass: test}}}", Refused("spec.tags")),
        ("should fail if tags contain a restricted domain key: karpenter.sh/nodeclaim", "{spec: {tags: {karpenter.sh/nodeclaim: test}}}", Refused("spec.tags")),
        ("should fail if role is not defined", "{spec: {role: null}}", Refused("spec")),
        ("should succeed when updating the role (the created object)", "{spec: {role: test-role}}", Accepted),
    ]);
    check(BASE, &cases);
}

/// Contexts "SubnetSelectorTerms", "SecurityGroupSelectorTerms" and
/// "CapacityReservationSelectorTerms".
#[test]
fn selector_terms() {
    let s = "spec.subnetSelectorTerms";
    let g = "spec.securityGroupSelectorTerms";
    let c = "spec.capacityReservationSelectorTerms";
    let cases: &[Case] = &[
        ("subnet: should succeed with a valid subnet selector on tags", "{spec: {subnetSelectorTerms: [{tags: {test: testvalue}}]}}", Accepted),
        ("subnet: should succeed with a valid subnet selector on id", "{spec: {subnetSelectorTerms: [{id: subnet-12345749}]}}", Accepted),
        ("subnet: should fail when subnet selector terms is set to nil", "{spec: {subnetSelectorTerms: null}}", Refused(s)),
        ("subnet: should fail when no subnet selector terms exist", "{spec: {subnetSelectorTerms: []}}", Refused(s)),
        ("subnet: should fail when a subnet selector term has no values", "{spec: {subnetSelectorTerms: [{}]}}", Refused(s)),
        ("subnet: should fail when a subnet selector term has no tag map values", "{spec: {subnetSelectorTerms: [{}]}}", Refused(s)),
        ("subnet: should fail when a subnet selector term has a tag map key that is empty", "{spec: {subnetSelectorTerms: [{tags: {test: ''}}]}}", Refused(s)),
        ("subnet: should fail when a subnet selector term has a tag map value that is empty", "{spec: {subnetSelectorTerms: [{tags: {'': testvalue}}]}}", Refused(s)),
        ("subnet: should fail when the last subnet selector is invalid", "{spec: {subnetSelectorTerms: [{tags: {test: testvalue}}, {tags: {test2: testvalue2}}, {tags: {test3: testvalue3}}, {tags: {'': testvalue4}}]}}", Refused(s)),
        ("subnet: should fail when specifying id with tags", "{spec: {subnetSelectorTerms: [{id: subnet-12345749, tags: {test: testvalue}}]}}", Refused(s)),
        ("security group: should succeed with a valid security group selector on tags", "{spec: {securityGroupSelectorTerms: [{tags: {test: testvalue}}]}}", Accepted),
        ("security group: should succeed with a valid security group selector on id", "{spec: {securityGroupSelectorTerms: [{id: sg-12345749}]}}", Accepted),
        ("security group: should succeed with a valid security group selector on name", "{spec: {securityGroupSelectorTerms: [{name: testname}]}}", Accepted),
        ("security group: should fail when security group selector terms is set to nil", "{spec: {securityGroupSelectorTerms: null}}", Refused(g)),
        ("security group: should fail when no security group selector terms exist", "{spec: {securityGroupSelectorTerms: []}}", Refused(g)),
        ("security group: should fail when a security group selector term has no values", "{spec: {securityGroupSelectorTerms: [{}]}}", Refused(g)),
        ("security group: should fail when a security group selector term has no tag map values", "{spec: {securityGroupSelectorTerms: [{}]}}", Refused(g)),
        ("security group: should fail when a security group selector term has a tag map key that is empty", "{spec: {securityGroupSelectorTerms: [{tags: {test: ''}}]}}", Refused(g)),
        ("security group: should fail when a security group selector term has a tag map value that is empty", "{spec: {securityGroupSelectorTerms: [{tags: {'': testvalue}}]}}", Refused(g)),
        ("security group: should fail when the last security group selector is invalid", "{spec: {securityGroupSelectorTerms: [{tags: {test: testvalue}}, {tags: {test2: testvalue2}}, {tags: {test3: testvalue3}}, {tags: {'': testvalue4}}]}}", Refused(g)),
        ("security group: should fail when specifying id with tags", "{spec: {securityGroupSelectorTerms: [{id: sg-12345749, tags: {test: testvalue}}]}}", Refused(g)),
        ("security group: should fail when specifying id with name", "{spec: {securityGroupSelectorTerms: [{id: sg-12345749, name: my-security-group}]}}", Refused(g)),
        ("security group: should fail when specifying name with tags", "{spec: {securityGroupSelectorTerms: [{name: my-security-group, tags: {test: testvalue}}]}}", Refused(g)),
        ("reservation: should succeed with a valid capacity reservation selector on tags", "{spec: {capacityReservationSelectorTerms: [{tags: {test: testvalue}}]}}", Accepted),
        ("reservation: should succeed with a valid capacity reservation selector on id", "{spec: {capacityReservationSelectorTerms: [{id: cr-12345749}]}}", Accepted),
        ("reservation: should succeed for a valid ownerID", "{spec: {capacityReservationSelectorTerms: [{ownerID: '012345678901', tags: {test: testvalue}}]}}", Accepted),
        ("reservation: should fail with a capacity reservation selector on a malformed id", "{spec: {capacityReservationSelectorTerms: [{id: r-12345749}]}}", Refused(c)),
        ("reservation: should succeed when capacity group selector terms is set to nil", "{spec: {capacityReservationSelectorTerms: null}}", Accepted),
        ("reservation: should fail when a capacity reservation selector term has no values", "{spec: {capacityReservationSelectorTerms: [{}]}}", Refused(c)),
        ("reservation: should fail when a capacity reservation selector term has no tag map values", "{spec: {capacityReservationSelectorTerms: [{}]}}", Refused(c)),
        ("reservation: should fail when a capacity reservation selector term has a tag map key that is empty", "{spec: {capacityReservationSelectorTerms: [{tags: {test: ''}}]}}", Refused(c)),
        ("reservation: should fail when a capacity reservation selector term has a tag map value that is empty", "{spec: {capacityReservationSelectorTerms: [{tags: {'': testvalue}}]}}", Refused(c)),
        ("reservation: should fail when the last capacity reservation selector is invalid", "{spec: {capacityReservationSelectorTerms: [{tags: {test: testvalue}}, {tags: {test2: testvalue2}}, {tags: {test3: testvalue3}}, {tags: {'': testvalue4}}]}}", Refused(c)),
        ("reservation: should fail when specifying id with tags in a single term", "{spec: {capacityReservationSelectorTerms: [{id: cr-12345749, tags: {test: testvalue}}]}}", Refused(c)),
        ("reservation: should fail when specifying id with ownerID in a single term", "{spec: {capacityReservationSelectorTerms: [{ownerID: '012345678901', id: cr-12345749}]}}", Refused(c)),
        ("reservation: should fail when the ownerID is malformed", "{spec: {capacityReservationSelectorTerms: [{ownerID: '01234567890', tags: {test: testvalue}}]}}", Refused(c)),
        ("reservation: should fail when the ownerID is set by itself", "{spec: {capacityReservationSelectorTerms: [{ownerID: '012345678901'}]}}", Refused(c)),
        ("reservation: should succeed with a valid instanceMatchCriteria 'open'", "{spec: {capacityReservationSelectorTerms: [{instanceMatchCriteria: open}]}}", Accepted),
        ("reservation: should succeed with a valid instanceMatchCriteria 'targeted'", "{spec: {capacityReservationSelectorTerms: [{instanceMatchCriteria: targeted}]}}", Accepted),
        ("reservation: should succeed with instanceMatchCriteria combined with tags", "{spec: {capacityReservationSelectorTerms: [{instanceMatchCriteria: open, tags: {test: testvalue}}]}}", Accepted),
        ("reservation: should succeed with instanceMatchCriteria combined with ownerID and tags", "{spec: {capacityReservationSelectorTerms: [{instanceMatchCriteria: targeted, ownerID: '012345678901', tags: {test: testvalue}}]}}", Accepted),
        ("reservation: should fail with invalid instanceMatchCriteria value", "{spec: {capacityReservationSelectorTerms: [{instanceMatchCriteria: invalid}]}}", Refused(c)),
        ("reservation: should fail when specifying id with instanceMatchCriteria", "{spec: {capacityReservationSelectorTerms: [{id: cr-12345749, instanceMatchCriteria: open}]}}", Refused(c)),
    ];
    check(BASE, cases);
}

/// Context "AMISelectorTerms".
#[test]
fn ami_selector_terms() {
    let a = "spec.amiSelectorTerms";
    let mut owned: Vec<Owned> = Vec::new();
    for (field, value) in [
        ("alias", "al2023@latest"),
        ("tags", "{test: testvalue}"),
        ("name", "my-custom-ami"),
        ("owner", "'123456789'"),
    ] {
        owned.push((
            format!("should fail when specifying id with other fields: {field}"),
            format!("{{spec: {{amiSelectorTerms: [{{id: ami-1234749, {field}: {value}}}]}}}}"),
            Refused(a),
        ));
    }
    for (field, value) in [
        ("id", "ami-1234749"),
        ("tags", "{test: testvalue}"),
        ("name", "my-custom-ami"),
        ("owner", "'123456789'"),
    ] {
        owned.push((
            format!("should fail when specifying alias with other fields: {field}"),
            format!("{{spec: {{amiSelectorTerms: [{{alias: al2023@latest, {field}: {value}}}]}}}}"),
            Refused(a),
        ));
    }
    for (alias, family) in [
        ("al2@latest", "AL2"),
        ("al2@v20240625", "AL2"),
        ("al2023@latest", "AL2023"),
        ("al2023@v20240625", "AL2023"),
        ("bottlerocket@latest", "Bottlerocket"),
        ("bottlerocket@1.10.0", "Bottlerocket"),
        ("windows2019@latest", "Windows2019"),
        ("windows2022@latest", "Windows2022"),
        ("windows2025@latest", "Windows2025"),
    ] {
        owned.push((
            format!("should succeed for valid aliases: {alias}"),
            format!("{{spec: {{amiFamily: {family}, amiSelectorTerms: [{{alias: {alias:?}}}]}}}}"),
            Accepted,
        ));
    }
    for alias in [
        "@latest",
        "al2023",
        "al2023@",
        "al2023-latest",
        "ubuntu@latest",
        "windows2019@v1.0.0",
        "windows2022@v1.0.0",
        "windows2025@v1.0.0",
    ] {
        owned.push((format!("should fail for incorrectly formatted aliases / an invalid family / non-latest Windows versions: {alias}"), format!("{{spec: {{amiSelectorTerms: [{{alias: {alias:?}}}]}}}}"), Refused(a)));
    }
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        ("should succeed with a valid ami selector on alias", "{spec: {amiSelectorTerms: [{alias: al2023@latest}]}}", Accepted),
        ("should succeed with a valid ami selector on tags", "{spec: {amiSelectorTerms: [{tags: {test: testvalue}}]}}", Accepted),
        ("should succeed with a valid ami selector on id", "{spec: {amiSelectorTerms: [{id: ami-12345749}]}}", Accepted),
        ("should succeed with a valid ami selector on name", "{spec: {amiSelectorTerms: [{name: testname}]}}", Accepted),
        ("should succeed with a valid ami selector on name and owner", "{spec: {amiSelectorTerms: [{name: testname, owner: testowner}]}}", Accepted),
        ("should succeed when an ami selector term has an owner key with tags", "{spec: {amiSelectorTerms: [{owner: testowner, tags: {test: testvalue}}]}}", Accepted),
        ("should fail when a ami selector term has no values", "{spec: {amiSelectorTerms: [{}]}}", Refused(a)),
        ("should fail when a ami selector term has no tag map values", "{spec: {amiSelectorTerms: [{}]}}", Refused(a)),
        ("should fail when a ami selector term has a tag map key that is empty", "{spec: {amiSelectorTerms: [{tags: {test: ''}}]}}", Refused(a)),
        ("should fail when a ami selector term has a tag map value that is empty", "{spec: {amiSelectorTerms: [{tags: {'': testvalue}}]}}", Refused(a)),
        ("should fail when the last ami selector is invalid", "{spec: {amiSelectorTerms: [{tags: {test: testvalue}}, {tags: {test2: testvalue2}}, {tags: {test3: testvalue3}}, {tags: {'': testvalue4}}]}}", Refused(a)),
        ("should fail when specifying alias with other terms", "{spec: {amiSelectorTerms: [{alias: al2023@latest}, {id: ami-1234749}]}}", Refused(a)),
    ]);
    check(BASE, &cases);
}

/// Context "Kubelet".
#[test]
fn kubelet() {
    let k = "spec.kubelet";
    let all = "memory.available: 5%, nodefs.available: 10%, nodefs.inodesFree: 15%, imagefs.available: 5%, imagefs.inodesFree: 5%, pid.available: 5%";
    let grace = "memory.available: 1m0s, nodefs.available: 1m30s, nodefs.inodesFree: 5m0s, imagefs.available: 1h0m0s, imagefs.inodesFree: 24h0m0s, pid.available: 1m0s";
    let owned = [
        ("should succeed on evictionHard with valid keys".to_string(), format!("{{spec: {{kubelet: {{evictionHard: {{{all}}}}}}}}}"), Accepted),
        ("should succeed on evictionSoft with valid keys".to_string(), format!("{{spec: {{kubelet: {{evictionSoft: {{{all}}}, evictionSoftGracePeriod: {{{grace}}}}}}}}}"), Accepted),
        ("should succeed on evictionSoftGracePeriod with valid keys".to_string(), format!("{{spec: {{kubelet: {{evictionSoft: {{{all}}}, evictionSoftGracePeriod: {{{grace}}}}}}}}}"), Accepted),
    ];
    let mut cases = borrowed(&owned);
    cases.extend_from_slice(&[
        ("should fail on kubeReserved with invalid keys", "{spec: {kubelet: {kubeReserved: {pods: '2'}}}}", Refused(k)),
        ("should fail on systemReserved with invalid keys", "{spec: {kubelet: {systemReserved: {pods: '2'}}}}", Refused(k)),
        ("should fail on evictionHard with invalid keys", "{spec: {kubelet: {evictionHard: {memory: 5%}}}}", Refused(k)),
        ("should fail on invalid formatted percentage value in evictionHard", "{spec: {kubelet: {evictionHard: {memory.available: 5%3}}}}", Refused(k)),
        ("should fail on invalid percentage value (too large) in evictionHard", "{spec: {kubelet: {evictionHard: {memory.available: 110%}}}}", Refused(k)),
        ("should fail on invalid quantity value in evictionHard", "{spec: {kubelet: {evictionHard: {memory.available: 110GB}}}}", Refused(k)),
        ("should fail on evictionSoft with invalid keys", "{spec: {kubelet: {evictionSoft: {memory: 5%}, evictionSoftGracePeriod: {memory: 1m0s}}}}", Refused(k)),
        ("should fail on invalid formatted percentage value in evictionSoft", "{spec: {kubelet: {evictionSoft: {memory.available: 5%3}, evictionSoftGracePeriod: {memory.available: 1m0s}}}}", Refused(k)),
        ("should fail on invalid percentage value (too large) in evictionSoft", "{spec: {kubelet: {evictionSoft: {memory.available: 110%}, evictionSoftGracePeriod: {memory.available: 1m0s}}}}", Refused(k)),
        ("should fail on invalid quantity value in evictionSoft", "{spec: {kubelet: {evictionSoft: {memory.available: 110GB}, evictionSoftGracePeriod: {memory.available: 1m0s}}}}", Refused(k)),
        ("should fail when eviction soft doesn't have matching grace period", "{spec: {kubelet: {evictionSoft: {memory.available: 200Mi}}}}", Refused(k)),
        ("should succeed on a valid imageGCHighThresholdPercent", "{spec: {kubelet: {imageGCHighThresholdPercent: 10}}}", Accepted),
        ("should fail when imageGCHighThresholdPercent is less than imageGCLowThresholdPercent", "{spec: {kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}}}", Refused(k)),
        ("should fail when imageGCLowThresholdPercent is greather than imageGCHighThresheldPercent", "{spec: {kubelet: {imageGCHighThresholdPercent: 50, imageGCLowThresholdPercent: 60}}}", Refused(k)),
        // integration/validation_test.go "should error if imageGCHighThresholdPercent or
        // imageGCLowThresholdPercent is negative" (the CRD's minimum 0, maximum 100).
        ("(e2e) a negative imageGCHighThresholdPercent", "{spec: {kubelet: {imageGCHighThresholdPercent: -10}}}", Refused("spec.kubelet.imageGCHighThresholdPercent")),
        ("(e2e) a negative imageGCLowThresholdPercent", "{spec: {kubelet: {imageGCLowThresholdPercent: -10}}}", Refused("spec.kubelet.imageGCLowThresholdPercent")),
        ("(ours) imageGCHighThresholdPercent above 100", "{spec: {kubelet: {imageGCHighThresholdPercent: 101}}}", Refused("spec.kubelet.imageGCHighThresholdPercent")),
        ("(ours) the bounds 0 and 100", "{spec: {kubelet: {imageGCHighThresholdPercent: 100, imageGCLowThresholdPercent: 0}}}", Accepted),
        ("should fail on evictionSoftGracePeriod with invalid keys", "{spec: {kubelet: {evictionSoftGracePeriod: {memory: 1m0s}}}}", Refused(k)),
        ("should fail when eviction soft grace period doesn't have matching threshold", "{spec: {kubelet: {evictionSoftGracePeriod: {memory.available: 1m0s}}}}", Refused(k)),
    ]);
    check(BASE, &cases);
}

/// Contexts "MetadataOptions", "NetworkInterfaces", "ConnectionTracking" and "CPUOptions":
/// fields passed to EC2 as written, checked as the CRD checks them.
#[test]
fn launch_options() {
    let m = "spec.metadataOptions";
    let n = "spec.networkInterfaces";
    let c = "spec.connectionTracking";
    let cases: &[Case] = &[
        ("should succeed for valid inputs", "{spec: {metadataOptions: {httpEndpoint: disabled, httpProtocolIPv6: enabled, httpPutResponseHopLimit: 34, httpTokens: optional}}}", Accepted),
        ("should fail for invalid for HTTPEndpoint", "{spec: {metadataOptions: {httpEndpoint: test}}}", Refused(m)),
        ("should fail for invalid for HTTPProtocolIPv6", "{spec: {metadataOptions: {httpProtocolIPv6: test}}}", Refused(m)),
        ("should fail for invalid for HTTPPutResponseHopLimit", "{spec: {metadataOptions: {httpPutResponseHopLimit: -5}}}", Refused(m)),
        ("should fail for invalid for HTTPTokens", "{spec: {metadataOptions: {httpTokens: test}}}", Refused(m)),
        ("should succeed with valid multiple network interfaces", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}, {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}, {networkCardIndex: 1, deviceIndex: 1, interfaceType: interface}]}}", Accepted),
        ("should succeed when network interfaces is empty", "{spec: {networkInterfaces: []}}", Accepted),
        ("should fail with an invalid interface type", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: efa}]}}", Refused(n)),
        ("should fail with a negative NetworkCardIndex", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: -1, deviceIndex: 0, interfaceType: interface}]}}", Refused(n)),
        ("should fail with a negative DeviceIndex", "{spec: {networkInterfaces: [{networkCardIndex: -1, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 0, deviceIndex: -1, interfaceType: interface}]}}", Refused(n)),
        ("should fail with duplicate Network Interface and Device Index fields", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 0, deviceIndex: 1, interfaceType: efa-only}, {networkCardIndex: 1, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}]}}", Refused(n)),
        ("should fail with no primary network interface", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 1, interfaceType: interface}]}}", Refused(n)),
        ("should fail when primary network interface is not ENA", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: efa-only}]}}", Refused(n)),
        ("should fail when multiple EFA devices on one network card", "{spec: {networkInterfaces: [{networkCardIndex: 0, deviceIndex: 0, interfaceType: interface}, {networkCardIndex: 1, deviceIndex: 0, interfaceType: efa-only}, {networkCardIndex: 1, deviceIndex: 1, interfaceType: efa-only}]}}", Refused(n)),
        ("should fail when connectionTracking is specified with no fields set", "{spec: {connectionTracking: {}}}", Refused(c)),
        ("should succeed with valid tcpEstablishedTimeout", "{spec: {connectionTracking: {tcpEstablishedTimeout: 60}}}", Accepted),
        ("should succeed with valid udpStreamTimeout", "{spec: {connectionTracking: {udpStreamTimeout: 120}}}", Accepted),
        ("should succeed with valid udpTimeout", "{spec: {connectionTracking: {udpTimeout: 45}}}", Accepted),
        ("should succeed with all valid connection tracking settings", "{spec: {connectionTracking: {tcpEstablishedTimeout: 432000, udpStreamTimeout: 180, udpTimeout: 60}}}", Accepted),
        ("should fail when tcpEstablishedTimeout is below minimum (60s)", "{spec: {connectionTracking: {tcpEstablishedTimeout: 59}}}", Refused(c)),
        ("should fail when tcpEstablishedTimeout is above maximum (432000s)", "{spec: {connectionTracking: {tcpEstablishedTimeout: 432001}}}", Refused(c)),
        ("should fail when udpStreamTimeout is below minimum (60s)", "{spec: {connectionTracking: {udpStreamTimeout: 59}}}", Refused(c)),
        ("should fail when udpStreamTimeout is above maximum (180s)", "{spec: {connectionTracking: {udpStreamTimeout: 181}}}", Refused(c)),
        ("should fail when udpTimeout is below minimum (30s)", "{spec: {connectionTracking: {udpTimeout: 29}}}", Refused(c)),
        ("should fail when udpTimeout is above maximum (60s)", "{spec: {connectionTracking: {udpTimeout: 61}}}", Refused(c)),
        ("should succeed with nestedVirtualization enabled", "{spec: {cpuOptions: {nestedVirtualization: enabled}}}", Accepted),
        ("should succeed with nestedVirtualization disabled", "{spec: {cpuOptions: {nestedVirtualization: disabled}}}", Accepted),
        ("should fail with invalid nestedVirtualization value", "{spec: {cpuOptions: {nestedVirtualization: invalid}}}", Refused("spec.cpuOptions")),
        ("should succeed with empty CPUOptions", "{spec: {cpuOptions: {}}}", Accepted),
        // (ours) placementGroupSelector, from the CRD's pattern, minLength and CEL rules (no
        // upstream It covers them at v1.14.1).
        ("(ours) a placement group by name", "{spec: {placementGroupSelector: {name: pg}}}", Accepted),
        ("(ours) a placement group by id", "{spec: {placementGroupSelector: {id: pg-0123abc}}}", Accepted),
        ("(ours) neither name nor id", "{spec: {placementGroupSelector: {}}}", Refused("spec.placementGroupSelector")),
        ("(ours) both name and id", "{spec: {placementGroupSelector: {name: pg, id: pg-1}}}", Refused("spec.placementGroupSelector")),
        ("(ours) an id off the pattern", "{spec: {placementGroupSelector: {id: sg-1}}}", Refused("spec.placementGroupSelector.id")),
        ("(ours) an empty name", "{spec: {placementGroupSelector: {name: ''}}}", Refused("spec.placementGroupSelector.name")),
        ("(ours) a misspelt field", "{spec: {placementGroupSelector: {name: pg, nam: x}}}", Refused("spec.placementGroupSelector.nam")),
    ];
    check(BASE, cases);
}

/// Context "BlockDeviceMappings". Upstream's quantities as Go writes them (`500G`, `50T`,
/// `1m`, `0` for an empty one); its two rate cases also have a `0` size, so "(ours)" cases
/// check the rate rules with a valid size.
#[test]
fn block_device_mappings() {
    let b = "spec.blockDeviceMappings";
    let cases: &[Case] = &[
        ("should succeed if more than one root volume is specified", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 500G}, rootVolume: true}, {deviceName: map-device-2, ebs: {volumeSize: 50T}}]}}", Accepted),
        ("should succeed for valid VolumeSize in G", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 58G}}]}}", Accepted),
        ("should succeed for valid VolumeSize in T", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 45T}}]}}", Accepted),
        ("should fail if more than one root volume is specified", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 50G}, rootVolume: true}, {deviceName: map-device-2, ebs: {volumeSize: 50G}, rootVolume: true}]}}", Refused(b)),
        ("should fail VolumeSize is less then 1Gi/1G", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 1m}}]}}", Refused(b)),
        ("should fail VolumeSize is greater then 64T", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 100T}}]}}", Refused(b)),
        ("should fail for VolumeSize that do not parse into quantity values", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: '0'}}]}}", Refused(b)),
        ("should fail if VolumeInitializationRate set but SnapshotID not specified", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: '0', volumeInitializationRate: 100}}]}}", Refused(b)),
        ("should fail if VolumeInitializationRate too low", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: '0', snapshotID: snap-1, volumeInitializationRate: 99}}]}}", Refused(b)),
        ("should fail if VolumeInitializationRate too high", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: '0', snapshotID: snap-1, volumeInitializationRate: 888}}]}}", Refused(b)),
        ("(ours) a rate without a snapshot", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 20Gi, volumeInitializationRate: 100}}]}}", Refused(b)),
        ("(ours) a rate too low", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 20Gi, snapshotID: snap-1, volumeInitializationRate: 99}}]}}", Refused(b)),
        ("(ours) a rate too high", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeSize: 20Gi, snapshotID: snap-1, volumeInitializationRate: 888}}]}}", Refused(b)),
        ("(ours) a rate with a snapshot", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {snapshotID: snap-1, volumeInitializationRate: 300}}]}}", Accepted),
        ("(ours) an ebs with neither size nor snapshot", "{spec: {blockDeviceMappings: [{deviceName: map-device-1, ebs: {volumeType: gp3}}]}}", Refused(b)),
    ];
    check(BASE, cases);
}

/// The CRD's `pattern`s on selector ids (`aws v1.14.1:
/// pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml`: `ami-[0-9a-z]+`, `subnet-[0-9a-z]+`,
/// `sg-[0-9a-z]+`, unanchored as the API server reads them: the id must contain a match). Seen
/// in the wild: https://github.com/kubernetes-sigs/karpenter/issues/2932 (`id: TBD-testing`
/// among security groups).
#[test]
fn selector_id_patterns() {
    let cases: &[Case] = &[
        ("security group id without sg-", "{spec: {securityGroupSelectorTerms: [{id: sg-0123abc}, {id: TBD-testing}]}}", Refused("spec.securityGroupSelectorTerms[1].id")),
        ("subnet id without subnet-", "{spec: {subnetSelectorTerms: [{id: foo}]}}", Refused("spec.subnetSelectorTerms[0].id")),
        ("ami id without ami-", "{spec: {amiSelectorTerms: [{id: image-1}]}}", Refused("spec.amiSelectorTerms[0].id")),
        ("upper case after the prefix", "{spec: {subnetSelectorTerms: [{id: subnet-ABC}]}}", Refused("spec.subnetSelectorTerms[0].id")),
        ("unanchored: a match inside is enough", "{spec: {securityGroupSelectorTerms: [{id: my-sg-1}]}}", Accepted),
        ("valid ids", "{spec: {securityGroupSelectorTerms: [{id: sg-12345749}], subnetSelectorTerms: [{id: subnet-12345749}], amiSelectorTerms: [{id: ami-12345749}]}}", Accepted),
    ];
    check(BASE, cases);
}
