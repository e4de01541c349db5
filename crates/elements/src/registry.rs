//! The element class registry: class name -> constructor. Users choose classes by name in
//! their configurations; `pktflow elements` lists this table.
use crate::conf::InitEnv;
use crate::element::Element;

/// Builds a configured element from its configuration string; the error says what the
/// class expected (the caller adds file:line:col).
pub type MakeElement = fn(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String>;

/// One element class.
pub struct ClassInfo {
    pub name: &'static str,
    /// One line: what the element does.
    pub summary: &'static str,
    /// Build a configured element ([`MakeElement`]).
    pub make: MakeElement,
}

/// Every class pktflow implements.
pub fn classes() -> Vec<&'static ClassInfo> {
    crate::elements::CLASS_LISTS
        .iter()
        .flat_map(|l| l.iter())
        .collect()
}

pub fn find(name: &str) -> Option<&'static ClassInfo> {
    crate::elements::CLASS_LISTS
        .iter()
        .flat_map(|l| l.iter())
        .find(|c| c.name == name)
}

/// The known class whose name is closest to `name` (for "did you mean" hints).
pub fn suggest(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    classes()
        .into_iter()
        .map(|c| (edit_distance(&lower, &c.name.to_ascii_lowercase()), c.name))
        .filter(|(d, n)| *d <= 2.max(n.len() / 4))
        .min()
        .map(|(_, n)| n)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_suggestions_work() {
        let mut names: Vec<_> = classes().iter().map(|c| c.name).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(n, names.len(), "duplicate class names in the registry");
        assert_eq!(suggest("Qeue"), Some("Queue"));
        assert_eq!(suggest("CompletelyDifferentThing"), None);
    }
}
