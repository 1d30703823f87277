//! Objects normalised as they are read (`build.rs`, `load_paths`) give what normalising the
//! whole input at once gave: the same manifests, and the same first error.

use super::super::{load_paths, read_objects, read_str};
use super::*;

fn pod(name: &str, extra: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  {extra}containers: [{{name: a, resources: {{requests: {{cpu: 1}}}}}}]\n"
    )
}

const SANDBOX: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\noverhead: {podFixed: {cpu: 250m}}\n";
const BAD_SANDBOX: &str = "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: gvisor}\nhandler: runsc\noverhead: {podFixed: {cpu: lots}}\n";

fn load(docs: &[String]) -> Result<Manifests, String> {
    load_str("in.yaml", &docs.join("---\n")).map_err(|e| e.to_string())
}

#[test]
fn a_runtime_class_read_after_its_pods_still_adds_its_overhead() {
    let m = load(&[
        pod("first", "runtimeClassName: gvisor\n  "),
        pod("plain", ""),
        SANDBOX.to_string(),
    ])
    .unwrap();
    let cpu: Vec<_> = m
        .pods
        .iter()
        .map(|p| (p.name.clone(), p.requests.cpu))
        .collect();
    assert_eq!(
        cpu,
        [("first".into(), 1250), ("plain".into(), 1000)],
        "input order kept"
    );
}

#[test]
fn the_first_error_is_the_whole_inputs() {
    let bad_pod = pod("bad", "").replace("cpu: 1", "cpu: lots");
    // A duplicate anywhere beats an invalid object before it.
    let e = load(&[bad_pod.clone(), pod("p", ""), pod("p", "")]).unwrap_err();
    assert!(e.contains("Pod/p: defined twice"), "{e}");
    // An invalid RuntimeClass anywhere beats another invalid object before it.
    let e = load(&[bad_pod.clone(), BAD_SANDBOX.to_string()]).unwrap_err();
    assert!(e.contains("RuntimeClass/gvisor"), "{e}");
    // Otherwise the first invalid object in input order, waiting pods included.
    let e = load(&[
        pod("waits", "runtimeClassName: gvisor\n  ").replace("cpu: 1", "cpu: lots"),
        bad_pod,
        SANDBOX.to_string(),
    ])
    .unwrap_err();
    assert!(e.contains("Pod/waits"), "{e}");
}

#[test]
fn reading_files_object_by_object_gives_the_same_manifests() {
    let dir = std::env::temp_dir().join(format!("kk-streaming-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = [
        pod("a", "nodeName: n1\n  "),
        pod("b", ""),
        SANDBOX.to_string(),
    ]
    .join("---\n");
    let json_stream = "---\n{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n1\"}}\n---\n{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"c\"}, \"spec\": {\"runtimeClassName\": \"gvisor\", \"containers\": [{\"name\": \"a\"}]}}\n";
    let list = r#"{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "labels": {"a": "b"}}}]}"#;
    let mut paths = Vec::new();
    for (name, text) in [
        ("1.yaml", yaml.as_str()),
        ("2.json", json_stream),
        ("3.json", list),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        paths.push(path.display().to_string());
    }
    let streamed = load_paths(&paths, &mut std::io::empty()).unwrap();
    let whole =
        Manifests::from_objects(read_objects(&paths, &mut std::io::empty()).unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(streamed, whole);
    assert_eq!(streamed.pods.len(), 2);
    assert_eq!(
        streamed.pods[1].requests.cpu, 250,
        "the class from another file"
    );
}

#[test]
fn a_json_input_of_only_null_holds_no_object() {
    let e = read_str("n.json", "null\n").unwrap_err().to_string();
    assert!(e.contains("no Kubernetes objects found"), "{e}");
}

/// The objects of `text` as `(Kind/name, object)`, or the error.
fn objects_of(name: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    read_str(name, text)
        .map(|o| {
            o.objects
                .into_iter()
                .map(|o| (o.name, format!("{:?}", o.object)))
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// `docs` (YAML) as one JSON List (`kubectl get nodes,pods -o json`), the same List as YAML
/// (typed whole by the YAML reader), and as separate JSON documents.
fn three_forms(docs: &[String]) -> [String; 3] {
    let items: Vec<serde_json::Value> = docs
        .iter()
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect();
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items});
    [
        serde_json::to_string_pretty(&list).unwrap(),
        crate::api::yaml::to_string(&list).unwrap(),
        items
            .iter()
            .map(|i| serde_json::to_string_pretty(i).unwrap())
            .collect::<Vec<_>>()
            .join("\n"),
    ]
}

/// A JSON List's items are typed one at a time (`yaml::Documents::next_part`), not the List
/// as a whole: the same objects as the List typed whole (its YAML form) and as separate
/// documents, and the same first error, naming `items[N]`: a malformed later item beats
/// an invalid earlier one, as when the whole List was typed first.
#[test]
fn a_json_lists_items_streamed_give_the_same_objects_and_errors() {
    let node = |name: &str| {
        format!("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}, labels: {{rank: \"3\"}}}}\nspec: {{providerID: \"aws:///us-east-1a/i-1\"}}\nstatus: {{allocatable: {{cpu: 2, pods: 110}}}}\n")
    };
    let docs = [
        node("a"),
        pod(
            "p",
            "tolerations: [{key: \"a[\\\"]\", operator: Exists}]\n  ",
        ),
        node("b"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {\"x]\": \"{\"}\n".to_string(),
    ];
    let [json_list, yaml_list, separate] = three_forms(&docs);
    let streamed = objects_of("all.json", &json_list).unwrap();
    assert_eq!(streamed.len(), 3, "{streamed:?}");
    assert_eq!(streamed, objects_of("all.yaml", &yaml_list).unwrap());
    assert_eq!(streamed, objects_of("all.json", &separate).unwrap());
    // Errors: an invalid item (found when read), then a malformed later one (found typing).
    let invalid = pod("bad", "").replace("name: bad", "generateName: bad-");
    let malformed = node("m").replace("cpu: 2", "cpu: [2]");
    for (docs, item) in [
        (vec![node("a"), invalid.clone(), node("b")], 1),
        (vec![node("a"), invalid, node("b"), malformed], 3),
    ] {
        let [json_list, yaml_list, _] = three_forms(&docs);
        let e = objects_of("all.json", &json_list).unwrap_err();
        assert!(e.contains(&format!("items[{item}]")), "{e}");
        let whole = objects_of("all.json", &yaml_list).unwrap_err();
        assert_eq!(strip_line(&e), strip_line(&whole));
        // With `kind` before `items` (`serde_json` writes keys sorted: `items` first).
        let kind_first = json_list
            .replacen(
                "\"apiVersion\": \"v1\",",
                "\"apiVersion\": \"v1\", \"kind\": \"List\",",
                1,
            )
            .replacen(",\n  \"kind\": \"List\"", "", 1);
        assert!(
            kind_first.find("\"kind\"") < kind_first.find("\"items\""),
            "{kind_first}"
        );
        let e = objects_of("all.json", &kind_first).unwrap_err();
        assert!(e.starts_with(&format!("all.json (items[{item}])")), "{e}");
    }
}

/// An error message without its `line N` part (the JSON and YAML forms put the item on
/// different lines).
fn strip_line(e: &str) -> String {
    e.split(", line").next().unwrap_or(e).to_string()
}

/// Streamed: each item of a JSON List is handed out before the next is typed — the objects
/// before a malformed item are out when its error is found (the whole List typed first would
/// have handed out none).
#[test]
fn a_json_lists_items_are_handed_out_one_by_one() {
    let node = |name: &str| format!("apiVersion: v1\nkind: Node\nmetadata: {{name: {name}}}\n");
    let malformed = node("m").replace("metadata:", "spec: {unschedulable: [1]}\nmetadata:");
    let [json_list, _, _] = three_forms(&[node("a"), node("b"), malformed]);
    let source = crate::api::load::Source {
        name: "all.json".into(),
        text: json_list,
        explicit: true,
    };
    let mut handed = Vec::new();
    let e = crate::api::objects::read_source_each(
        &source,
        &mut crate::api::objects::Objects::default(),
        &mut |o| handed.push(o.name),
    )
    .unwrap_err();
    assert_eq!(handed, ["Node/a", "Node/b"]);
    assert!(e.to_string().contains("items[2]"), "{e}");
}
