//! Elements of the seed 001 benchmarks (`001_50c9ec885c831f52.txt` section 5: "L3-switch,
//! MPLS, Firewall"): a MAC-learning Ethernet bridge, MPLS label push and swap/pop against a
//! label table, and an ordered 5-tuple rule list where the first match wins. Every element's
//! doc header states what it does, its ports and its cost rule.
pub mod ether_bridge;
pub mod firewall_rules;
pub mod mpls;

use crate::registry::ClassInfo;

pub static CLASSES: &[ClassInfo] = &[
    ether_bridge::CLASS,
    mpls::PUSH,
    mpls::SWAP,
    firewall_rules::CLASS,
];
