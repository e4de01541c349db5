//! placeholder
#[derive(Default)]
pub struct ArpTableState {}
