//! conformance/schema/schema.yaml, the format of a case, checked before each
//! case runs (as every runner does): an unknown field, a value of the wrong
//! kind or a missing required field fails that case.
use std::collections::HashMap;

use regex::Regex;

use super::yaml::Node;

#[derive(Default)]
pub struct Field {
    pub ty: String,
    pub required: bool,
    pub default: Option<String>,
    pub with: Option<String>,
    pub list: bool,
    pub verb: bool,
    pub decides: bool,
    pub of_decision: bool,
}

#[derive(Default)]
pub struct Record {
    pub fields: Vec<(String, Field)>,
    pub any_field: Option<String>,
    pub exactly_one_of: Vec<String>,
    pub at_most_one_of: Vec<String>,
}

impl Record {
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }
}

pub struct Schema {
    pub scalars: HashMap<String, Regex>,
    pub records: HashMap<String, Record>,
}

fn names(n: Option<&Node>) -> Vec<String> {
    n.map(|n| n.items().iter().map(|i| i.text().to_owned()).collect()).unwrap_or_default()
}

impl Schema {
    pub fn load(root: &Node) -> Schema {
        let scalars = root
            .get("scalars")
            .unwrap()
            .entries()
            .iter()
            .map(|(k, v)| (k.clone(), Regex::new(&format!("^(?:{})$", v.text())).unwrap()))
            .collect();
        let records = root
            .get("records")
            .unwrap()
            .entries()
            .iter()
            .map(|(name, r)| {
                let fields = r
                    .get("fields")
                    .map(|f| {
                        f.entries()
                            .iter()
                            .map(|(n, spec)| {
                                let flag = |k: &str| spec.str(k) == Some("true");
                                (
                                    n.clone(),
                                    Field {
                                        ty: spec.str("type").unwrap_or("").to_owned(),
                                        required: flag("required"),
                                        default: spec.str("default").map(str::to_owned),
                                        with: spec.str("with").map(str::to_owned),
                                        list: flag("list"),
                                        verb: flag("verb"),
                                        decides: flag("decides"),
                                        of_decision: flag("of_decision"),
                                    },
                                )
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                (
                    name.clone(),
                    Record {
                        fields,
                        any_field: r.str("any_field").map(str::to_owned),
                        exactly_one_of: names(r.get("exactly_one_of")),
                        at_most_one_of: names(r.get("at_most_one_of")),
                    },
                )
            })
            .collect();
        Schema { scalars, records }
    }

    /// Checks n as a `ty` and fills in the defaults of its fields.
    pub fn check(&self, n: &mut Node, ty: &str, at: &str) -> Result<(), String> {
        if let Some(pattern) = self.scalars.get(ty) {
            let article = if ty == "int64" { "an" } else { "a" };
            return match n {
                Node::Scalar(s) if pattern.is_match(s) => {
                    if ty == "int64" && s.parse::<i64>().is_err() {
                        Err(format!("{at}: '{s}' is not an int64"))
                    } else {
                        Ok(())
                    }
                }
                other => Err(format!("{at}: '{}' is not {article} {ty}", other.text())),
            };
        }
        let r = &self.records[ty];
        let Node::Map(entries) = n else { return Err(format!("{at} must be a map")) };
        for (field, value) in entries.iter_mut() {
            let (field_ty, list) = match (r.field(field), &r.any_field) {
                (Some(f), _) => (f.ty.clone(), f.list),
                (None, Some(any)) => (any.clone(), false),
                (None, None) => return Err(format!("{at}: unknown field '{field}'")),
            };
            let here = format!("{at}.{field}");
            if !list {
                self.check(value, &field_ty, &here)?;
                continue;
            }
            let Node::Seq(items) = value else { return Err(format!("{here} must be a list")) };
            for (j, item) in items.iter_mut().enumerate() {
                self.check(item, &field_ty, &format!("{here}[{}]", j + 1))?;
            }
        }
        let given = |f: &str| entries.iter().any(|(k, _)| k == f);
        let mut verbs = Vec::new();
        let mut checks = Vec::new();
        for (field, _) in entries.iter() {
            if let Some(spec) = r.field(field) {
                if let Some(with) = &spec.with {
                    if !given(with) {
                        return Err(format!("{at}.{field} without {with}"));
                    }
                }
                if spec.verb {
                    verbs.push(field.clone());
                }
                if spec.of_decision {
                    checks.push(field.clone());
                }
            }
        }
        for (field, spec) in &r.fields {
            if spec.required && !given(field) {
                return Err(format!("{at}: no {field}"));
            }
        }
        for (rule, group) in [("exactly one of", &r.exactly_one_of), ("at most one of", &r.at_most_one_of)] {
            let count = group.iter().filter(|f| given(f)).count();
            if !group.is_empty() && (count > 1 || (count == 0 && rule == "exactly one of")) {
                return Err(format!("{at}: {rule} {}", group.join(", ")));
            }
        }
        if r.fields.iter().any(|(_, f)| f.verb) {
            if verbs.len() != 1 {
                return Err(format!("{at}: needs exactly one verb"));
            }
            if let Some(c) = checks.first() {
                if !r.field(&verbs[0]).unwrap().decides {
                    return Err(format!("{at}: {} returns no decision for {c}", verbs[0]));
                }
            }
        }
        let missing: Vec<_> = r
            .fields
            .iter()
            .filter(|(f, spec)| spec.default.is_some() && !given(f))
            .map(|(f, spec)| (f.clone(), Node::Scalar(spec.default.clone().unwrap())))
            .collect();
        entries.extend(missing);
        Ok(())
    }

    pub fn verb_of<'a>(&self, step: &'a Node) -> &'a str {
        let r = &self.records["step"];
        step.entries().iter().find(|(k, _)| r.field(k).is_some_and(|f| f.verb)).map(|(k, _)| k.as_str()).unwrap()
    }
}
