//! The transport between hosts (multi-host rendezvous and bootstrap). So far its wire format:
//! listen handles, hellos that name the job, and sequenced frames.

pub mod wire;
