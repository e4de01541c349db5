//! Named plug-ins. Every extensible family of pktflow (engines, mappers, routing functions,
//! traffic patterns, contention managers, signature hashes) is a [`Registry`]: adding a member
//! is one file implementing the family's trait and one `register` line. The registry gives the
//! command line its list of names with one help line each, and one error message for a name it
//! does not know.
use std::fmt;

pub struct Entry<T> {
    pub name: &'static str,
    pub help: &'static str,
    pub item: T,
}

pub struct Registry<T> {
    family: &'static str,
    entries: Vec<Entry<T>>,
}

impl<T> Registry<T> {
    /// An empty registry; `family` names its members in messages ("mapper", "routing function").
    pub const fn new(family: &'static str) -> Self {
        Registry {
            family,
            entries: Vec::new(),
        }
    }

    /// Add a member. Panics on a duplicate name: two registrations of one name is a bug of the
    /// program, found by the registry's own test, never by a user.
    pub fn register(&mut self, name: &'static str, help: &'static str, item: T) -> &mut Self {
        assert!(
            !self.entries.iter().any(|e| e.name == name),
            "{} '{name}' registered twice",
            self.family
        );
        self.entries.push(Entry { name, help, item });
        self
    }

    /// The member called `name`, or an error listing the known ones.
    pub fn get(&self, name: &str) -> Result<&T, UnknownName> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .map(|e| &e.item)
            .ok_or_else(|| UnknownName {
                family: self.family,
                name: name.to_string(),
                known: self.names().join(", "),
            })
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    pub fn entries(&self) -> &[Entry<T>] {
        &self.entries
    }

    pub fn family(&self) -> &'static str {
        self.family
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownName {
    pub family: &'static str,
    pub name: String,
    pub known: String,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} '{}' (known: {})",
            self.family, self.name, self.known
        )
    }
}

impl std::error::Error for UnknownName {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_and_unknown_names() {
        let mut r: Registry<fn(u32) -> u32> = Registry::new("doubler");
        r.register("twice", "multiply by two", |x| 2 * x).register(
            "thrice",
            "multiply by three",
            |x| 3 * x,
        );
        assert_eq!((r.get("thrice").unwrap())(5), 15);
        let e = r.get("four").unwrap_err().to_string();
        assert_eq!(e, "unknown doubler 'four' (known: twice, thrice)");
        assert_eq!(r.names(), vec!["twice", "thrice"]);
    }

    #[test]
    #[should_panic(expected = "registered twice")]
    fn duplicate_names_are_a_bug() {
        let mut r: Registry<u8> = Registry::new("x");
        r.register("a", "", 1).register("a", "", 2);
    }
}
