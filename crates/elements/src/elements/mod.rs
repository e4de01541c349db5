//! Element implementations, one per file, grouped by family. Each family folder exports
//! `CLASSES`, the list of its classes for the registry.
pub mod click;
pub mod io;
pub mod ip;
pub mod nat;
pub mod standard;
pub mod stateful;
pub mod tdpm;

use crate::registry::ClassInfo;

/// The class lists of every family (the registry walks these).
pub static CLASS_LISTS: &[&[ClassInfo]] = &[
    standard::CLASSES,
    ip::CLASSES,
    nat::CLASSES,
    io::CLASSES,
    tdpm::CLASSES,
    stateful::CLASSES,
    click::CLASSES,
];
