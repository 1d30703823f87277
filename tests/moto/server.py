#!/usr/bin/env python3
"""moto as the EC2/SSM peer of the tests, seeded like an EKS account.

Usage: server.py [--region us-east-1] [--cluster test-cluster] [--iam] [--iam-users FILE]
                 [--audit FILE] [--fleet-ice TYPE[@ZONE]]... [--fleet-lose-answers N]
                 [--fleet-requests FILE]
                 [--instances N] [--capacity-reservation JSON]...

Starts `moto.server.ThreadedMotoServer` on a free loopback port, seeds it, then prints
  line 1: the endpoint URL (http://127.0.0.1:PORT)
  line 2: a JSON description of everything seeded (AMIs, SSM parameters, VPC, subnets, groups)
and serves until its standard input closes (or it is killed).

Why a launcher and not `moto_server`: moto refuses PutParameter under `/aws/` like AWS does, so
the EKS-optimized AMI parameters (`/aws/service/eks/...`, `/aws/service/bottlerocket/...`,
`/aws/service/ami-windows-latest/...`) can only be put into its backend in-process. AMIs are
registered in the backend too, because RegisterImage cannot set an owner alias, architecture,
creation date or deprecation time.

What the seed looks like (the tests rely on it, so keep it stable):
- Kubernetes versions 1.24 1.25 1.29 1.30 1.32 1.33 1.34 1.35.
- Every variant Karpenter resolves (docs/karpenter.md §3.2), each with two releases: the older one is
  reachable only through its pinned parameter, the newer one is also `recommended`/`latest`.
  Real gaps are mirrored: no AL2 from 1.33 on, no AL2023 for 1.24. Deliberate gaps test the
  missing-variant rule: AL2023 arm64 nvidia is absent for 1.29, Bottlerocket nvidia is absent
  for 1.25.
- The older AL2 release of every version is deprecated (DeprecationTime in the past).
- Self-owned "team" AMIs with tags for selector tests (newer-but-deprecated vs older, amd64 vs
  arm64, and an i386 one that must be ignored).
- A VPC with a private and a public subnet per zone and three security groups, tagged like an
  eksctl cluster.
- CreateFleet (on-demand, `instant`) behaves like EC2 where moto 5.2.5 does not (docs/testing.md §3):
  overrides are tried in `Priority` order, the launch template's security groups are applied
  (`SecurityGroupIds`, else the primary network interface's `Groups`, as Karpenter's templates
  carry them),
  and pools named by `--fleet-ice TYPE[@ZONE]` answer `InsufficientInstanceCapacity` in the
  response's `Errors` (the next pool is tried). `--fleet-lose-answers N` makes the first N
  CreateFleet calls that launch an instance answer HTTP 500 instead (the answer is "lost"; the
  instance exists). The launch template's `IamInstanceProfile` is still not applied.
  `--fleet-requests FILE` appends each CreateFleet request to FILE as a JSON line (`Context`,
  `OnDemandOptions`, `SpotOptions`, `TargetCapacitySpecification`, `LaunchTemplateConfigs` as
  sent): moto keeps no `Context` and answers no strategy, so tests read what was asked here.
- Placement groups (moto 5.2.5 serves no DescribePlacementGroups): each `--placement-group JSON`
  seeds one (`{"id", "name", "strategy"}` required; `partitionCount`, `spreadLevel`, `state`
  (`available`) optional). DescribePlacementGroups answers from them as EC2 does (`GroupId`s,
  `GroupName`s, an unknown one is `InvalidPlacementGroupId.NotFound` /
  `InvalidPlacementGroup.Unknown`; filter `state`; one page).
- Capacity reservations (moto 5.2.5 has none): each `--capacity-reservation JSON` seeds one
  (`{"id", "instanceType", "zone"}` required; `available` (1), `total` (= available),
  `ownerId` (the account), `instanceMatchCriteria` (`targeted`), `reservationType`
  (`default`), `interruptible` (false), `state` (`active`), `endDate` (ISO 8601), `tags`
  optional), listed under `capacityReservations`. DescribeCapacityReservations answers from
  them as EC2 does (`CapacityReservationIds`, an unknown id is
  `InvalidCapacityReservationId.NotFound`; filters `state`, `owner-id`,
  `instance-match-criteria`, `instance-type`, `availability-zone`, `tag:KEY`, `tag-key`; one
  page). CreateFleet honours a launch template's `CapacityReservationTarget`: an override
  launches only into a reservation of its type and zone with instances left (the count goes
  down), else it answers `ReservationCapacityExceeded` in `Errors`.
- The AWS Price List Query API (moto 5.2.5 has none): `GetProducts` (JSON 1.1,
  `X-Amz-Target: AWSPriceListService.GetProducts`) answers from `tests/moto/pricing.json`, a
  small price list in the API's format (product documents; our own numbers: us-east-1 at the
  embedded snapshot's prices, eu-west-1 ordering c5.large below c6a.large). `ServiceCode` and
  every `TERM_MATCH` filter must match (a field is looked up in the product's attributes, then
  the product, then the document, case-insensitively); pages of at most 2 entries (and
  `MaxResults`), `NextToken` the next entry's index. Under --iam/--iam-users the caller needs
  `pricing:GetProducts` (on `*`), checked and audited like the EC2 calls; a denial is
  `AccessDeniedException`.
- With --instances N, N running instances (m5.large, tagged `karpenter.sh/nodepool=bulk`) are
  inserted through RunInstances' backend call, their ids listed under `bulkInstances`.
- IAM roles for instance-profile resolution (listed under `roles`, role -> profiles):
  `KarpenterNodeRole-<cluster>` in `KarpenterNodeInstanceProfile-<cluster>`, and
  `RoleWithoutProfile` in none.
- With --iam, IAM is enforced (moto's INITIAL_NO_AUTH_ACTION_COUNT=0) and the description carries
  `credentials.limited`: keys of a user allowed ec2:Describe* but not ssm:* (permission tests).
- With --iam-users FILE (a JSON object: user name -> policy document), IAM is enforced and each
  user is created with its policy; `credentials.<name>` carries its keys. With --audit FILE,
  every authorization of an IAM user is appended to FILE as a JSON line
  `{"user", "action", "resource", "allowed"}` (the least-privilege proofs read it).

How IAM is enforced (moto alone checks only the called action against `Resource: "*"`, and
denies any statement with a condition): policies are evaluated like IAM does — explicit Deny
wins, Allow needs a statement whose Action, Resource (wildcards) and Condition (StringEquals,
StringLike, StringNotEquals, StringNotLike; several values: any, several keys: all) match —
against the resources and condition keys AWS authorizes:
- `ssm:GetParameters` per parameter ARN (public `/aws/service/...` parameters have no account:
  `arn:aws:ssm:REGION::parameter/aws/service/...`);
- `iam:ListInstanceProfilesForRole` on the role's ARN;
- `ec2:TerminateInstances` per instance ARN, with `aws:ResourceTag/<key>` from its tags;
- `ec2:CreateLaunchTemplate` and `ec2:CreateFleet`, plus `ec2:CreateTags` for their own tag
  specifications (`ec2:CreateAction` = the call); and what CreateFleet does on the caller's
  behalf at launch, per pool, as EC2 does: `ec2:RunInstances` on the instance,
  `ec2:CreateTags` for the instance's (and its volumes') tags with `ec2:CreateAction` =
  `RunInstances`, and `iam:PassRole` on the launch template's instance profile's role with
  `iam:PassedToService` = `ec2.amazonaws.com`. A launch-time denial is a fleet error
  `UnauthorizedOperation` (EC2 reports it there too; EC2 encodes its message, which
  `aws sts decode-authorization-message` reads — here it is plain);
- every other call (Describe*) on `*`.
Denials name the action and resource: `UnauthorizedOperation` for EC2, `AccessDenied`
elsewhere (moto's code). The access key `testing` is the account's root: never checked (the
loopback kubelet and the seeding use it). Signatures are not verified (moto recomputes them
from a re-encoded body and rejects some valid ones); the access key id names the user.
"""

import argparse
import datetime
import hashlib
import json
import os
import sys
import tempfile

ACCOUNT = "123456789012"
EKS_OWNER = "602401143452"
BOTTLEROCKET_OWNER = "092701018921"
WINDOWS_OWNER = "801119661308"

K8S_VERSIONS = ["1.24", "1.25", "1.29", "1.30", "1.32", "1.33", "1.34", "1.35"]
# (release tag, creation date) — older first. AL2/AL2023 use vYYYYMMDD, Bottlerocket semver.
EKS_RELEASES = [("v20240101", "2024-01-01T10:00:00.000Z"), ("v20240625", "2024-06-25T10:00:00.000Z")]
BR_RELEASES = [("1.19.0", "2024-02-01T10:00:00.000Z"), ("1.20.0", "2024-06-20T10:00:00.000Z")]
WINDOWS_RELEASE = "2024-06-11T10:00:00.000Z"
PAST = "2024-03-01T00:00:00.000Z"
FUTURE = "2099-01-01T00:00:00.000Z"


def ami_id(name):
    """Deterministic AMI ids make failures readable and tests independent of seeding order."""
    return "ami-" + hashlib.sha256(name.encode()).hexdigest()[:17]


def major_minor(version):
    return tuple(int(p) for p in version.split("."))


class Seed:
    def __init__(self, region, cluster):
        self.region = region
        self.cluster = cluster
        self.images = []  # dicts: id, name, architecture, creationDate, deprecationTime, owner, tags
        self.parameters = {}  # name -> value

    def image(self, name, arch, created, owner, deprecated=None, tags=None, alias="amazon"):
        image = {
            "id": ami_id(name),
            "name": name,
            "architecture": arch,
            "creationDate": created,
            "deprecationTime": deprecated,
            "owner": owner,
            "ownerAlias": alias,
            "tags": tags or {},
        }
        self.images.append(image)
        return image["id"]

    def param(self, name, value):
        self.parameters[name] = value

    def al2(self, k):
        if major_minor(k) >= (1, 33):
            return
        base = f"/aws/service/eks/optimized-ami/{k}"
        for flavour, arch, prefix in [
            ("amazon-linux-2", "x86_64", "amazon-eks-node"),
            ("amazon-linux-2-arm64", "arm64", "amazon-eks-arm64-node"),
            ("amazon-linux-2-gpu", "x86_64", "amazon-eks-gpu-node"),
        ]:
            for i, (release, created) in enumerate(EKS_RELEASES):
                name = f"{prefix}-{k}-{release}"
                image = self.image(
                    name, arch, created, EKS_OWNER, deprecated=PAST if i == 0 else FUTURE
                )
                self.param(f"{base}/{flavour}/{prefix}-{k}-{release}/image_id", image)
                if i == len(EKS_RELEASES) - 1:
                    self.param(f"{base}/{flavour}/recommended/image_id", image)

    def al2023(self, k):
        if major_minor(k) < (1, 25):
            return
        base = f"/aws/service/eks/optimized-ami/{k}/amazon-linux-2023"
        for arch, variants in [("x86_64", ["standard", "nvidia", "neuron"]), ("arm64", ["standard", "nvidia"])]:
            for variant in variants:
                if k == "1.29" and arch == "arm64" and variant == "nvidia":
                    continue
                for i, (release, created) in enumerate(EKS_RELEASES):
                    name = f"amazon-eks-node-al2023-{arch}-{variant}-{k}-{release}"
                    image = self.image(name, arch, created, EKS_OWNER)
                    self.param(f"{base}/{arch}/{variant}/{name}/image_id", image)
                    if i == len(EKS_RELEASES) - 1:
                        self.param(f"{base}/{arch}/{variant}/recommended/image_id", image)

    def bottlerocket(self, k):
        for flavour in [f"aws-k8s-{k}", f"aws-k8s-{k}-nvidia"]:
            if k == "1.25" and flavour.endswith("nvidia"):
                continue
            for arch in ["x86_64", "arm64"]:
                for i, (release, created) in enumerate(BR_RELEASES):
                    name = f"bottlerocket-{flavour}-{arch}-v{release}-5f4e3d2c"
                    image = self.image(name, arch, created, BOTTLEROCKET_OWNER)
                    base = f"/aws/service/bottlerocket/{flavour}/{arch}"
                    self.param(f"{base}/{release}/image_id", image)
                    if i == len(BR_RELEASES) - 1:
                        self.param(f"{base}/latest/image_id", image)

    def windows(self, k):
        for server in ["2019", "2022", "2025"]:
            name = f"Windows_Server-{server}-English-Core-EKS_Optimized-{k}-2024.06.11"
            image = self.image(name, "x86_64", WINDOWS_RELEASE, WINDOWS_OWNER)
            self.param(
                f"/aws/service/ami-windows-latest/Windows_Server-{server}-English-Core-EKS_Optimized-{k}/image_id",
                image,
            )

    def team_images(self):
        """Self-owned images for selector tests (owner `self`, tags)."""
        tags = {"team": "platform", "karpenter.sh/discovery": self.cluster}
        me = ACCOUNT
        self.image("team-node-amd64-2024.01", "x86_64", "2024-01-15T00:00:00.000Z", me, tags=tags, alias=None)
        # Newer, but deprecated: compareAMI must still prefer the older non-deprecated one.
        self.image("team-node-amd64-2024.05", "x86_64", "2024-05-15T00:00:00.000Z", me,
                   deprecated=PAST, tags=tags, alias=None)
        self.image("team-node-arm64-2024.02", "arm64", "2024-02-15T00:00:00.000Z", me, tags=tags, alias=None)
        self.image("team-node-arm64-2024.04", "arm64", "2024-04-15T00:00:00.000Z", me, tags=tags, alias=None)
        # An architecture Kubernetes has no label for: Karpenter drops it.
        self.image("team-node-i386-2024.06", "i386", "2024-06-15T00:00:00.000Z", me, tags=tags, alias=None)
        # Tagged for another team, and a tag value containing a comma (v1 does not split it).
        self.image("other-node-amd64-2024.03", "x86_64", "2024-03-15T00:00:00.000Z", me,
                   tags={"team": "other", "owners": "a,b"}, alias=None)
        # An SSM parameter users point ssmParameter terms at (not under /aws/, so PutParameter
        # would work too; seeded here for one source of truth).
        self.param("/team/golden-ami", ami_id("team-node-arm64-2024.04"))
        self.param("/team/not-an-ami", "hello")

    def build(self):
        for k in K8S_VERSIONS:
            self.al2(k)
            self.al2023(k)
            self.bottlerocket(k)
            self.windows(k)
        self.team_images()


def parse_time(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def install(seed):
    """Puts the seed into moto's backends (same process as the server)."""
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.amis import Ami
    from moto.ssm.models import Parameter, ssm_backends

    ec2 = ec2_backends[ACCOUNT][seed.region]
    for image in seed.images:
        ami = Ami(
            ec2,
            image["id"],
            name=image["name"],
            owner_id=image["owner"],
            owner_alias=image["ownerAlias"],
            architecture=image["architecture"],
            creation_date=parse_time(image["creationDate"]),
            virtualization_type="hvm",
            root_device_type="ebs",
            root_device_name="/dev/xvda",
            region_name=seed.region + "a",
            tags=image["tags"] or None,
        )
        # moto has no deprecation model; its serializer picks `deprecation_time` up by name.
        if image["deprecationTime"]:
            ami.deprecation_time = image["deprecationTime"]
        ec2.amis[image["id"]] = ami

    ssm = ssm_backends[ACCOUNT][seed.region]
    now = datetime.datetime.now(datetime.timezone.utc)
    for name, value in seed.parameters.items():
        ssm._parameters[name].append(
            Parameter(
                account_id=ACCOUNT,
                name=name,
                value=value,
                parameter_type="String",
                description=None,
                allowed_pattern=None,
                keyid=None,
                last_modified_date=now,
                version=1,
                data_type="aws:ec2:image" if value.startswith("ami-") else "text",
            )
        )

    network = {"vpc": None, "subnets": [], "securityGroups": []}
    vpc = ec2.create_vpc("10.0.0.0/16")
    ec2.create_tags([vpc.id], {"Name": f"{seed.cluster}-vpc"})
    network["vpc"] = vpc.id
    zones = [seed.region + z for z in "abc"]
    for i, zone in enumerate(zones):
        for kind, cidr, tags in [
            ("private", f"10.0.{i * 32}.0/19", {
                "karpenter.sh/discovery": seed.cluster,
                "alpha.eksctl.io/cluster-name": seed.cluster,
                "kubernetes.io/role/internal-elb": "1",
            }),
            ("public", f"10.0.{128 + i * 16}.0/20", {
                "alpha.eksctl.io/cluster-name": seed.cluster,
                "kubernetes.io/role/elb": "1",
            }),
        ]:
            subnet = ec2.create_subnet(vpc.id, cidr, availability_zone=zone)
            tags = dict(tags, Name=f"{kind}-{zone}")
            ec2.create_tags([subnet.id], tags)
            network["subnets"].append({"id": subnet.id, "zone": zone, "kind": kind, "tags": tags})
    for name, tags in [
        (f"{seed.cluster}-node", {"karpenter.sh/discovery": seed.cluster,
                                  "alpha.eksctl.io/cluster-name": seed.cluster,
                                  f"kubernetes.io/cluster/{seed.cluster}": "owned"}),
        (f"{seed.cluster}-cluster", {f"kubernetes.io/cluster/{seed.cluster}": "owned"}),
        ("other", {"team": "other"}),
    ]:
        group = ec2.create_security_group(name, f"{name} group", vpc_id=vpc.id)
        ec2.create_tags([group.id], tags)
        network["securityGroups"].append({"id": group.id, "name": name, "tags": tags})
    return network


# Capacity reservations by id (seeded from --capacity-reservation; CreateFleet counts launches).
RESERVATIONS = {}


def seed_reservations(specs, region):
    """Parses the --capacity-reservation flags into RESERVATIONS; returns their descriptions."""
    for text in specs:
        spec = json.loads(text)
        available = int(spec.get("available", 1))
        RESERVATIONS[spec["id"]] = {
            "CapacityReservationId": spec["id"],
            "CapacityReservationArn": f"arn:aws:ec2:{region}:{ACCOUNT}:capacity-reservation/{spec['id']}",
            "OwnerId": spec.get("ownerId", ACCOUNT),
            "InstanceType": spec["instanceType"],
            "InstancePlatform": "Linux/UNIX",
            "AvailabilityZone": spec["zone"],
            "Tenancy": "default",
            "TotalInstanceCount": int(spec.get("total", available)),
            "AvailableInstanceCount": available,
            "State": spec.get("state", "active"),
            "InstanceMatchCriteria": spec.get("instanceMatchCriteria", "targeted"),
            "ReservationType": spec.get("reservationType", "default"),
            "Interruptible": bool(spec.get("interruptible", False)),
            "EndDate": parse_iso(spec["endDate"]) if spec.get("endDate") else None,
            "EndDateType": "limited" if spec.get("endDate") else "unlimited",
            "Tags": [{"Key": k, "Value": v} for k, v in sorted((spec.get("tags") or {}).items())],
        }
    return [dict(r, EndDate=r["EndDate"].isoformat() if r["EndDate"] else None)
            for r in RESERVATIONS.values()]


def parse_iso(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def reservation_matches(reservation, filters):
    """EC2's filter semantics for the filters DescribeCapacityReservations is asked with."""
    import fnmatch

    tags = {t["Key"]: t["Value"] for t in reservation["Tags"]}
    attributes = {
        "state": reservation["State"],
        "owner-id": reservation["OwnerId"],
        "instance-match-criteria": reservation["InstanceMatchCriteria"],
        "instance-type": reservation["InstanceType"],
        "availability-zone": reservation["AvailabilityZone"],
    }
    for name, values in filters.items():
        if name.startswith("tag:"):
            got = tags.get(name[4:])
        elif name == "tag-key":
            if not any(fnmatch.fnmatchcase(k, v) for k in tags for v in values):
                return False
            continue
        elif name in attributes:
            got = attributes[name]
        else:
            from moto.ec2.exceptions import EC2ClientError

            raise EC2ClientError("InvalidParameterValue", f"The filter '{name}' is invalid")
        if got is None or not any(fnmatch.fnmatchcase(got, v) for v in values):
            return False
    return True


def serve_capacity_reservations():
    """Registers DescribeCapacityReservations on moto's EC2 responses (see the docstring)."""
    from moto.core.responses import ActionResult
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.responses import EC2Response

    def describe_capacity_reservations(self):
        ids = self._get_param("CapacityReservationIds", [])
        filters = self._filters_from_querystring()
        for missing in [i for i in ids if i not in RESERVATIONS]:
            raise EC2ClientError("InvalidCapacityReservationId.NotFound",
                                 f"The capacity reservation ID '{missing}' does not exist")
        found = [dict((k, v) for k, v in r.items() if v is not None)
                 for r in RESERVATIONS.values()
                 if (not ids or r["CapacityReservationId"] in ids) and reservation_matches(r, filters)]
        return ActionResult({"CapacityReservations": found})

    EC2Response.describe_capacity_reservations = describe_capacity_reservations


# Placement groups by id (seeded from --placement-group; moto 5.x serves none).
PLACEMENT_GROUPS = {}


def seed_placement_groups(specs):
    """Parses the --placement-group flags into PLACEMENT_GROUPS."""
    for text in specs:
        spec = json.loads(text)
        group = {
            "GroupId": spec["id"],
            "GroupName": spec["name"],
            "Strategy": spec["strategy"],
            "State": spec.get("state", "available"),
        }
        if "partitionCount" in spec:
            group["PartitionCount"] = int(spec["partitionCount"])
        if "spreadLevel" in spec:
            group["SpreadLevel"] = spec["spreadLevel"]
        PLACEMENT_GROUPS[spec["id"]] = group


def serve_placement_groups():
    """Registers DescribePlacementGroups on moto's EC2 responses (see the docstring)."""
    from moto.core.responses import ActionResult
    from moto.ec2.exceptions import EC2ClientError
    from moto.ec2.responses import EC2Response

    def describe_placement_groups(self):
        ids = self._get_param("GroupIds", [])
        names = self._get_param("GroupNames", [])
        filters = self._filters_from_querystring()
        groups = list(PLACEMENT_GROUPS.values())
        for missing in [i for i in ids if i not in PLACEMENT_GROUPS]:
            raise EC2ClientError("InvalidPlacementGroupId.NotFound",
                                 f"The Placement Group ID '{missing}' does not exist")
        for missing in [n for n in names if not any(g["GroupName"] == n for g in groups)]:
            raise EC2ClientError("InvalidPlacementGroup.Unknown",
                                 f"The Placement Group '{missing}' is unknown.")
        found = [g for g in groups
                 if (not ids or g["GroupId"] in ids) and (not names or g["GroupName"] in names)
                 and all(g.get(k.capitalize()) in v for k, v in filters.items())]
        return ActionResult({"PlacementGroups": found})

    EC2Response.describe_placement_groups = describe_placement_groups


PRICE_LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pricing.json")
PRICE_PAGE = 2
# Set by enforce_iam: authorizes a Pricing request's `Authorization` header or raises.
PRICING_AUTHORIZE = None


def _term(document, field):
    """A product document's value of a Pricing filter field."""
    for scope in (document["product"].get("attributes", {}), document["product"], document):
        for key, value in scope.items():
            if key.lower() == field.lower() and isinstance(value, str):
                return value
    return None


def get_products(body):
    """GetProducts' answer (a dict) to the JSON request `body`."""
    with open(PRICE_LIST) as f:
        documents = json.load(f)
    filters = body.get("Filters", [])
    for flt in filters:
        if flt.get("Type", "TERM_MATCH") != "TERM_MATCH":
            raise ValueError(f"filter type {flt.get('Type')} is not served here")
    matching = [d for d in documents
                if d.get("serviceCode") == body.get("ServiceCode")
                and all(_term(d, flt["Field"]) == flt["Value"] for flt in filters)]
    start = int(body.get("NextToken") or 0)
    size = min(PRICE_PAGE, int(body.get("MaxResults") or 100))
    answer = {"FormatVersion": "aws_v1",
              "PriceList": [json.dumps(d) for d in matching[start:start + size]]}
    if start + size < len(matching):
        answer["NextToken"] = str(start + size)
    return answer


def serve_pricing():
    """Answers AWSPriceListService.GetProducts in front of moto's dispatcher (see the docstring)."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    original = DomainDispatcherApplication.__call__

    def respond(start_response, status, document):
        payload = json.dumps(document).encode()
        start_response(status, [("Content-Type", "application/x-amz-json-1.1"),
                                ("Content-Length", str(len(payload)))])
        return [payload]

    def call(self, environ, start_response):
        target = environ.get("HTTP_X_AMZ_TARGET") or ""
        if not target.startswith("AWSPriceListService."):
            return original(self, environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = json.loads(environ["wsgi.input"].read(length) or b"{}")
        operation = target.split(".", 1)[1]
        if operation != "GetProducts":
            return respond(start_response, "400 Bad Request",
                           {"__type": "InvalidParameterException", "message": f"{operation} is not served here"})
        if PRICING_AUTHORIZE is not None:
            try:
                PRICING_AUTHORIZE(environ.get("HTTP_AUTHORIZATION") or "")
            except Unauthorized as e:
                return respond(start_response, "400 Bad Request",
                               {"__type": "AccessDeniedException", "message": e.message})
        try:
            return respond(start_response, "200 OK", get_products(body))
        except ValueError as e:
            return respond(start_response, "400 Bad Request",
                           {"__type": "InvalidParameterException", "message": str(e)})

    DomainDispatcherApplication.__call__ = call


def fleet_error(spec, zone, code, message):
    """One entry of CreateFleet's `Errors` for the pool of `spec` in `zone`."""
    return {
        "LaunchTemplateAndOverrides": {
            "LaunchTemplateSpecification": {
                "LaunchTemplateId": spec.launch_template_spec.get("LaunchTemplateId"),
                "Version": spec.launch_template_spec.get("Version"),
            },
            "Overrides": {"InstanceType": spec.instance_type, "SubnetId": spec.subnet_id,
                          "AvailabilityZone": zone},
        },
        "Lifecycle": "on-demand",
        "ErrorCode": code,
        "ErrorMessage": message,
    }


def template_groups(data):
    """The security groups a launch template gives its instances: its top-level
    `SecurityGroupIds`, else those of its primary network interface (device 0 on card 0), where
    Karpenter's templates (and ours) put them; EC2 refuses both at once."""
    groups = list(data.get("SecurityGroupIds") or [])
    if groups:
        return groups
    for nic in data.get("NetworkInterfaces") or []:
        if int(nic.get("DeviceIndex") or 0) == 0 and int(nic.get("NetworkCardIndex") or 0) == 0:
            return list(nic.get("Groups") or [])
    return []


def targeted_reservation(data):
    """The reservation id a launch template's data targets, if any."""
    spec = data.get("CapacityReservationSpecification") or {}
    return (spec.get("CapacityReservationTarget") or {}).get("CapacityReservationId")


def patch_fleets(ice, lose_answers, requests_path=None):
    """Makes moto's instant on-demand CreateFleet behave like EC2 (see the module docstring)."""
    from moto.core.responses import ActionResult
    from moto.ec2.models import fleets
    from moto.ec2.responses import fleets as fleet_responses

    state = {"lose": lose_answers}

    def priority(spec):
        try:
            return float((spec.overrides or {}).get("Priority", "inf"))
        except (TypeError, ValueError):
            return float("inf")

    def create_on_demand_requests(self, weight_to_add):
        self.fleet_errors = getattr(self, "fleet_errors", [])
        for spec in sorted(self.launch_specs, key=priority):
            zone = None
            if spec.subnet_id:
                zone = self.ec2_backend.get_subnet(spec.subnet_id).availability_zone
            if (spec.instance_type, zone) in ice or (spec.instance_type, "*") in ice:
                self.fleet_errors.append(fleet_error(
                    spec, zone, "InsufficientInstanceCapacity",
                    f"We currently do not have sufficient {spec.instance_type} capacity "
                    f"in the Availability Zone you requested ({zone})."))
                continue
            template = self.ec2_backend.get_launch_template(spec.launch_template_spec["LaunchTemplateId"])
            data = template.get_version(spec.launch_template_spec.get("Version")).data
            target = targeted_reservation(data)
            if target is not None:
                held = RESERVATIONS.get(target)
                if (held is None or held["InstanceType"] != spec.instance_type
                        or held["AvailabilityZone"] != zone or held["AvailableInstanceCount"] <= 0):
                    self.fleet_errors.append(fleet_error(
                        spec, zone, "ReservationCapacityExceeded",
                        f"Insufficient capacity in capacity reservation {target} for "
                        f"{spec.instance_type} in {zone}."))
                    continue
                held["AvailableInstanceCount"] -= 1
            reservation = self.ec2_backend.run_instances(
                image_id=spec.image_id,
                count=1,
                instance_type=spec.instance_type,
                is_instance_type_default=False,
                key_name=spec.key_name,
                security_group_names=[],
                security_group_ids=template_groups(data),
                user_data=spec.user_data,
                placement=None,
                kernel_id=None,
                ramdisk_id=None,
                monitoring_enabled=spec.monitoring,
                subnet_id=spec.subnet_id,
                fleet_id=self.id,
                tags=spec.tag_specifications,
            )
            for instance in reservation.instances:
                self.on_demand_instances.append(
                    {"id": reservation.id, "instance": instance, "launch_spec": spec}
                )
            self.fulfilled_capacity += 1
            return

    fleets.Fleet.create_on_demand_requests = create_on_demand_requests
    original = fleet_responses.Fleets.create_fleet

    def create_fleet(self):
        if requests_path:
            sent = {key: self._get_param(key) for key in (
                "Context", "OnDemandOptions", "SpotOptions", "TargetCapacitySpecification",
                "LaunchTemplateConfigs")}
            with open(requests_path, "a") as f:
                f.write(json.dumps(sent, default=str) + "\n")
        result = original(self)
        fleet_id = result.result["FleetId"] if hasattr(result, "result") else None
        fleet = self.ec2_backend.get_fleet(fleet_id) if fleet_id else None
        if fleet is not None and fleet.on_demand_instances and state["lose"] > 0:
            state["lose"] -= 1
            raise RuntimeError("injected fault: CreateFleet answer lost")
        errors = getattr(fleet, "fleet_errors", None) if fleet is not None else None
        if errors:
            body = dict(result.result)
            body["Errors"] = errors
            return ActionResult(body)
        return result

    fleet_responses.Fleets.create_fleet = create_fleet


def bulk_instances(seed, count):
    """`count` running instances, inserted through the backend's RunInstances (fast)."""
    from moto.ec2.models import ec2_backends

    ec2 = ec2_backends[ACCOUNT][seed.region]
    image = next(i["id"] for i in seed.images if i["architecture"] == "x86_64")
    ids = []
    while len(ids) < count:
        n = min(500, count - len(ids))
        reservation = ec2.run_instances(
            image_id=image, count=n, user_data=None, security_group_names=[],
            instance_type="m5.large", is_instance_type_default=False,
            tags={"instance": {"karpenter.sh/nodepool": "bulk",
                               "eks:eks-cluster-name": seed.cluster}},
        )
        ids.extend(i.id for i in reservation.instances)
    return ids


def limited_user(endpoint, region):
    """A user that may describe EC2 but not read SSM, created through the API like a person would."""
    import boto3

    iam = boto3.client("iam", endpoint_url=endpoint, region_name=region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    iam.create_user(UserName="limited")
    iam.put_user_policy(
        UserName="limited",
        PolicyName="describe-only",
        PolicyDocument=json.dumps({
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": ["ec2:Describe*"], "Resource": "*"}],
        }),
    )
    key = iam.create_access_key(UserName="limited")["AccessKey"]
    return {"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}


def create_users(endpoint, region, users):
    """IAM users with one inline policy each ({name: policy document}); returns their keys."""
    import boto3

    iam = boto3.client("iam", endpoint_url=endpoint, region_name=region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    keys = {}
    for name, policy in users.items():
        iam.create_user(UserName=name)
        if policy.get("Statement"):
            iam.put_user_policy(UserName=name, PolicyName="policy", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=name)["AccessKey"]
        keys[name] = {"accessKeyId": key["AccessKeyId"], "secretAccessKey": key["SecretAccessKey"]}
    return keys


ROOT_KEY = "testing"


def _as_list(value):
    return value if isinstance(value, list) else [value]


def _wildcard(pattern, text, case=True):
    """IAM's `*` and `?` wildcards."""
    import fnmatch

    pattern = pattern.replace("[", "[[]")
    return fnmatch.fnmatchcase(text, pattern) if case else fnmatch.fnmatchcase(text.lower(), pattern.lower())


CONDITIONS = {
    "StringEquals": lambda want, got: got == want,
    "StringNotEquals": lambda want, got: got != want,
    "StringLike": lambda want, got: _wildcard(want, got),
    "StringNotLike": lambda want, got: not _wildcard(want, got),
}


def _conditions_hold(block, context):
    for operator, keys in (block or {}).items():
        if operator not in CONDITIONS:
            raise ValueError(f"condition operator {operator} is not emulated")
        for key, wanted in keys.items():
            got = next((v for k, v in context.items() if k.lower() == key.lower()), None)
            if got is None:
                if not operator.startswith("StringNot"):
                    return False
                continue
            matches = [CONDITIONS[operator](w, got) for w in _as_list(wanted)]
            if operator.startswith("StringNot"):
                if not all(matches):
                    return False
            elif not any(matches):
                return False
    return True


def evaluate(documents, action, resource, context):
    """IAM's decision for one request: explicit Deny wins, else any matching Allow."""
    allowed = False
    for document in documents:
        for statement in _as_list(document.get("Statement", [])):
            if "Action" in statement:
                if not any(_wildcard(a, action, case=False) for a in _as_list(statement["Action"])):
                    continue
            elif any(_wildcard(a, action, case=False) for a in _as_list(statement.get("NotAction", []))):
                continue
            if not any(_wildcard(r, resource) for r in _as_list(statement.get("Resource", "*"))):
                continue
            if not _conditions_hold(statement.get("Condition"), context):
                continue
            if statement.get("Effect") == "Deny":
                return False
            allowed = True
    return allowed


class Unauthorized(Exception):
    def __init__(self, service, arn, action, resource):
        self.service = service
        message = (f"User: {arn} is not authorized to perform: {action} on resource: {resource} "
                   f"because no identity-based policy allows the {action} action")
        if service == "ec2":
            message = "You are not authorized to perform this operation. " + message
        self.message = message
        super().__init__(message)


def enforce_iam(region, audit_path):
    """Replaces moto's IAM check with the evaluation described in the module docstring."""
    import threading

    from moto.core.authorization import ActionAuthenticatorMixin
    from moto.core.exceptions import _RESTError
    from moto.ec2.models import ec2_backends
    from moto.ec2.models import fleets
    from moto.iam import access_control
    from moto.iam.models import iam_backends

    audit_lock = threading.Lock()
    local = threading.local()

    class Denied(_RESTError):
        code = 403

    def denied(error):
        return Denied("UnauthorizedOperation" if error.service == "ec2" else "AccessDenied", error.message)

    def user_of(request):
        return request._access_key._owner_user_name

    def documents(request):
        return [access_control.IAMPolicy(p)._policy_json for p in request._access_key.collect_policies()]

    def check(principal, action, resource, context=None):
        user, arn, docs = principal
        allowed = evaluate(docs, action, resource, context or {})
        if audit_path:
            with audit_lock, open(audit_path, "a") as f:
                f.write(json.dumps({"user": user, "action": action, "resource": resource,
                                    "allowed": allowed}) + "\n")
        if not allowed:
            raise Unauthorized(action.split(":")[0], arn, action, resource)

    def param(data, key):
        value = data.get(key)
        return value[0] if isinstance(value, list) else value

    def indexed(data, prefix):
        """EC2 query lists: `Prefix.1.Field` -> [{Field: value}, ...]."""
        items = {}
        for key in data:
            if key.startswith(prefix + "."):
                index, _, field = key[len(prefix) + 1:].partition(".")
                items.setdefault(int(index), {})[field] = param(data, key)
        return [items[i] for i in sorted(items)]

    def checks(request):
        """(action, resource, context) AWS authorizes for this call, in order."""
        action = request._action
        data = request._data or {}
        account = request.account_id
        service = action.split(":")[0]
        if action == "ssm:GetParameters":
            body = json.loads(request._body or b"{}") if request._body else {}
            for name in body.get("Names", []):
                if name.startswith("arn:"):
                    yield action, name, {}
                    continue
                name = name if name.startswith("/") else "/" + name
                owner = "" if name.startswith("/aws/service/") else account
                yield action, f"arn:aws:ssm:{region}:{owner}:parameter{name}", {}
            return
        if action == "iam:ListInstanceProfilesForRole":
            yield action, f"arn:aws:iam::{account}:role/{param(data, 'RoleName')}", {}
            return
        if action == "ec2:TerminateInstances":
            ec2 = ec2_backends[account][region]
            for spec in indexed(data, "InstanceId"):
                for instance_id in spec.values():
                    tags = ec2.tags.get(instance_id, {})
                    context = {f"aws:ResourceTag/{k}": v for k, v in tags.items()}
                    yield action, f"arn:aws:ec2:{region}:{account}:instance/{instance_id}", context
            return
        if action in ("ec2:CreateLaunchTemplate", "ec2:CreateFleet"):
            kind = "launch-template" if action == "ec2:CreateLaunchTemplate" else "fleet"
            yield action, f"arn:aws:ec2:{region}:{account}:{kind}/*", {}
            for spec in indexed(data, "TagSpecification"):
                resource_type = spec.get("ResourceType")
                if resource_type == kind:
                    yield ("ec2:CreateTags", f"arn:aws:ec2:{region}:{account}:{kind}/*",
                           {"ec2:CreateAction": action.split(":")[1]})
            return
        yield action, "*", {}

    def check_action_permitted(self, resource):
        principal = (user_of(self), self._access_key.arn, documents(self))
        try:
            for action, arn, context in checks(self):
                check(principal, action, arn, context)
        except Unauthorized as e:
            raise denied(e)
        # CreateFleet launches on the caller's behalf: its pools are authorized as they launch.
        local.principal = principal

    access_control.IAMRequestBase.check_action_permitted = check_action_permitted
    # The key names the user; its signature is not checked: moto recomputes it from the form
    # body re-encoded by botocore, which differs for values with spaces ("Linux/UNIX (Amazon
    # VPC)"), and answers AuthFailure to requests EC2 accepts.
    access_control.IAMRequestBase.check_signature = lambda self: None

    original = ActionAuthenticatorMixin._authenticate_and_authorize_action

    def authenticate(self, iam_request_cls, resource="*"):
        local.principal = None
        authorization = self.headers.get("Authorization") or ""
        if f"Credential={ROOT_KEY}/" in authorization:
            return
        original(self, iam_request_cls, resource)

    ActionAuthenticatorMixin._authenticate_and_authorize_action = authenticate

    def authorize_pricing(authorization):
        """`pricing:GetProducts` for the key of a Pricing request (moto serves no Pricing)."""
        if f"Credential={ROOT_KEY}/" in authorization or "Credential=" not in authorization:
            return
        key_id = authorization.split("Credential=", 1)[1].split("/", 1)[0]
        try:
            key = access_control.IAMUserAccessKey(account_id=ACCOUNT, partition="aws",
                                                  access_key_id=key_id, headers={})
        except access_control.CreateAccessKeyFailure:
            raise Unauthorized("pricing", f"arn:aws:iam::{ACCOUNT}:user/unknown", "pricing:GetProducts", "*")
        principal = (key._owner_user_name, key.arn,
                     [access_control.IAMPolicy(p)._policy_json for p in key.collect_policies()])
        check(principal, "pricing:GetProducts", "*")

    global PRICING_AUTHORIZE
    PRICING_AUTHORIZE = authorize_pricing

    original_launch = fleets.Fleet.create_on_demand_requests

    def launch_as_caller(self, weight_to_add):
        """Drops the pools the caller may not launch, as fleet errors; launches the rest."""
        principal = getattr(local, "principal", None)
        if principal is None:
            return original_launch(self, weight_to_add)
        account = self.ec2_backend.account_id
        region_name = self.ec2_backend.region_name
        allowed = []
        self.fleet_errors = getattr(self, "fleet_errors", [])
        # EC2 authorizes the pool it launches: in priority order until one may be launched
        # (the policy does not vary by pool, so the first answer is every pool's).
        ordered = sorted(self.launch_specs, key=lambda s: float((s.overrides or {}).get("Priority", "inf")))
        for position, spec in enumerate(ordered):
            try:
                check(principal, "ec2:RunInstances", f"arn:aws:ec2:{region_name}:{account}:instance/*")
                for resource_type, tags in spec.tag_specifications.items():
                    if tags:
                        check(principal, "ec2:CreateTags",
                              f"arn:aws:ec2:{region_name}:{account}:{resource_type}/*",
                              {"ec2:CreateAction": "RunInstances"})
                for role in launch_roles(account, spec):
                    check(principal, "iam:PassRole", role, {"iam:PassedToService": "ec2.amazonaws.com"})
                allowed = ordered[position:]
                break
            except Unauthorized as e:
                zone = self.ec2_backend.get_subnet(spec.subnet_id).availability_zone if spec.subnet_id else None
                self.fleet_errors.append(fleet_error(spec, zone, "UnauthorizedOperation", e.message))
        every = self.launch_specs
        self.launch_specs = allowed
        try:
            return original_launch(self, weight_to_add)
        finally:
            self.launch_specs = every

    def launch_roles(account, spec):
        profile = spec._iam_instance_profile_arn or {}
        iam = iam_backends[account]["aws"]
        try:
            if profile.get("Arn"):
                found = iam.get_instance_profile_by_arn(profile["Arn"])
            elif profile.get("Name"):
                found = iam.get_instance_profile(profile["Name"])
            else:
                return []
        except Exception:
            return []
        return [role.arn for role in found.roles]

    fleets.Fleet.create_on_demand_requests = launch_as_caller


def node_roles(endpoint, region, cluster):
    """IAM roles for instance-profile resolution: one held by an instance profile, one by none.

    Created through the API like a person (or eksctl) would; returns {role: [profiles]}.
    """
    import boto3

    iam = boto3.client("iam", endpoint_url=endpoint, region_name=region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    trust = json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"},
                       "Action": "sts:AssumeRole"}],
    })
    roles = {f"KarpenterNodeRole-{cluster}": [f"KarpenterNodeInstanceProfile-{cluster}"],
             "RoleWithoutProfile": []}
    for role, profiles in roles.items():
        iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust)
        for profile in profiles:
            iam.create_instance_profile(InstanceProfileName=profile)
            iam.add_role_to_instance_profile(InstanceProfileName=profile, RoleName=role)
    return roles


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--cluster", default="test-cluster")
    parser.add_argument("--iam", action="store_true", help="enforce IAM; print limited credentials")
    parser.add_argument("--iam-users", metavar="FILE",
                        help="enforce IAM; create these users ({name: policy}) and print their keys")
    parser.add_argument("--audit", metavar="FILE", help="append every IAM user's authorization to FILE")
    parser.add_argument("--fleet-ice", action="append", default=[], metavar="TYPE[@ZONE]",
                        help="CreateFleet pools answering InsufficientInstanceCapacity")
    parser.add_argument("--fleet-lose-answers", type=int, default=0, metavar="N",
                        help="the first N launching CreateFleet calls answer HTTP 500")
    parser.add_argument("--fleet-requests", metavar="FILE",
                        help="append every CreateFleet request to FILE (JSON lines)")
    parser.add_argument("--instances", type=int, default=0, metavar="N",
                        help="insert N running m5.large instances")
    parser.add_argument("--capacity-reservation", action="append", default=[], metavar="JSON",
                        help="seed a capacity reservation (see the module docstring)")
    parser.add_argument("--placement-group", action="append", default=[], metavar="JSON",
                        help="seed a placement group (see the module docstring)")
    args = parser.parse_args()

    # Only the AMIs seeded here: moto's bundled public images would make `owner: amazon`
    # queries depend on moto's data files. MOTO_AMIS_PATH is read when moto's EC2 models are
    # imported, so it must be set first.
    empty = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    empty.write("[]")
    empty.close()
    os.environ["MOTO_AMIS_PATH"] = empty.name
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")

    from moto.server import ThreadedMotoServer

    seed = Seed(args.region, args.cluster)
    seed.build()
    network = install(seed)
    ice = set()
    for pool in args.fleet_ice:
        kind, _, zone = pool.partition("@")
        ice.add((kind, zone or "*"))
    patch_fleets(ice, args.fleet_lose_answers, args.fleet_requests)
    reservations = seed_reservations(args.capacity_reservation, args.region)
    serve_capacity_reservations()
    seed_placement_groups(args.placement_group)
    serve_placement_groups()
    serve_pricing()
    bulk = bulk_instances(seed, args.instances) if args.instances else []

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    roles = node_roles(f"http://{host}:{port}", args.region, args.cluster)
    credentials = {}
    if args.iam:
        credentials["limited"] = limited_user(f"http://{host}:{port}", args.region)
    if args.iam_users:
        with open(args.iam_users) as f:
            credentials.update(create_users(f"http://{host}:{port}", args.region, json.load(f)))
    if args.iam or args.iam_users:
        from moto import settings

        enforce_iam(args.region, args.audit)
        settings.INITIAL_NO_AUTH_ACTION_COUNT = 0
    description = {
        "credentials": credentials,
        "region": args.region,
        "account": ACCOUNT,
        "cluster": args.cluster,
        "images": seed.images,
        "parameters": seed.parameters,
        "bulkInstances": bulk,
        "roles": roles,
        "capacityReservations": reservations,
        **network,
    }
    sys.stdout.write(f"http://{host}:{port}\n{json.dumps(description)}\n")
    sys.stdout.flush()
    try:
        # Serve until the test harness closes our stdin (or kills us).
        while sys.stdin.read(4096):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        os.unlink(empty.name)


if __name__ == "__main__":
    main()
