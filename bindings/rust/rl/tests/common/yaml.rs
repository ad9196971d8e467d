//! YAML as the shared tables are written: every scalar is the text it was
//! written as (`burst: 5` is "5"), maps keep their order.
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub enum Node {
    Scalar(String),
    Map(Vec<(String, Node)>),
    Seq(Vec<Node>),
}

impl Node {
    pub fn get(&self, field: &str) -> Option<&Node> {
        match self {
            Node::Map(m) => m.iter().find(|(k, _)| k == field).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn text(&self) -> &str {
        match self {
            Node::Scalar(s) => s,
            _ => "",
        }
    }

    pub fn str(&self, field: &str) -> Option<&str> {
        self.get(field).map(Node::text)
    }

    pub fn entries(&self) -> &[(String, Node)] {
        match self {
            Node::Map(m) => m,
            _ => &[],
        }
    }

    pub fn items(&self) -> &[Node] {
        match self {
            Node::Seq(s) => s,
            _ => &[],
        }
    }
}

fn scalar(v: &serde_yaml::Value) -> String {
    match v {
        serde_yaml::Value::Null => String::new(),
        serde_yaml::Value::Bool(b) => b.to_string(),
        serde_yaml::Value::Number(n) => n.to_string(),
        serde_yaml::Value::String(s) => s.clone(),
        serde_yaml::Value::Tagged(t) => scalar(&t.value),
        _ => String::new(),
    }
}

pub fn from_value(v: &serde_yaml::Value) -> Node {
    match v {
        serde_yaml::Value::Mapping(m) => Node::Map(m.iter().map(|(k, v)| (scalar(k), from_value(v))).collect()),
        serde_yaml::Value::Sequence(s) => Node::Seq(s.iter().map(from_value).collect()),
        other => Node::Scalar(scalar(other)),
    }
}

pub fn load(path: &Path) -> Result<Node, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: serde_yaml::Value = serde_yaml::from_str(&text).map_err(|e| format!("malformed: {e}"))?;
    Ok(from_value(&v))
}

/// The repository's root (bindings/rust/rl/../../..).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}
