//! Workspace integration tests live in `tests/`; this library holds what several of them
//! share.

pub mod dag;
