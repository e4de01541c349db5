//! NAT elements: IPClassifier and its filter language, the rewriters (IPRewriter,
//! IPAddrRewriter, IPRewriterPatterns) with their per-flow mapping table, and the checksum
//! elements (SetIPChecksum, SetTCPChecksum, SetUDPChecksum, CheckTCPHeader, CheckUDPHeader).
pub mod flow;
pub mod hdr;
mod ip_addr_rewriter;
mod ip_classifier;
mod ip_filter;
mod ip_rewriter;
mod ip_rewriter_patterns;
pub mod ipfilter;
mod l4_checksum;
pub mod pattern;
mod set_ip_checksum;
pub mod shared;

use crate::registry::ClassInfo;

pub static CLASSES: &[ClassInfo] = &[
    ip_classifier::CLASS,
    ip_filter::CLASS,
    ip_rewriter::CLASS,
    ip_addr_rewriter::CLASS,
    ip_rewriter_patterns::CLASS,
    set_ip_checksum::CLASS,
    l4_checksum::SET_TCP,
    l4_checksum::SET_UDP,
    l4_checksum::CHECK_TCP,
    l4_checksum::CHECK_UDP,
];
