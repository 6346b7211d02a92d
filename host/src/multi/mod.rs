//! Several GPUs of one host joined through NCCL: sharded reductions and row-sharded sgemv.
//!
//! A [`MultiGpu`] holds one [`Gpu`](crate::Gpu) per device (rank i = the i-th) and one NCCL
//! communicator each; NCCL is loaded when it is built ([`crate::nccl`]). Every collective runs
//! on each rank's default stream, so it is ordered with that rank's kernels.
//!
//! How partial results are joined:
//! - **Integer sums**: an NCCL all-reduce (`ncclSum`), exact in any order.
//! - **Float sums, min, max, minmax**: an NCCL all-gather of every rank's partial, then each
//!   rank folds the gathered values with the library's own kernel, in rank order. Floats are
//!   then deterministic (same shards, same bits), and min/max keep the library's NaN and ±0
//!   semantics, which NCCL's min/max do not have (nor its 16-bit integer types).
//!
//! Every rank ends with the result; value calls return each rank's, in rank order.
//!
//! No wait on the ranks blocks: each polls every rank's stream and communicator, so a rank that
//! faults, an NCCL error or a stall past [`DEFAULT_WAIT_LIMIT`] ends it with
//! `Error::RankFailed`, after which every communicator is aborted.
//!
//! Files: `wait` (the bounded poll over the ranks), `join` (a rank's join scratch), `ranks` (the
//! set of devices and communicators: open, collective lock, waits, abort and drop), `reduce`
//! (the sharded reductions and their join), `rows` (row-sharded sgemv, broadcast and gather),
//! `raw` (their raw forms, on device addresses and lengths), `buffers` (what they take).
mod buffers;
mod join;
mod ranks;
mod raw;
mod reduce;
mod rows;
mod wait;

pub use buffers::{RawBuffer, RawRowShard, RowShard};
pub use ranks::{shard_ranges, upload, MultiGpu};
pub use reduce::JoinSum;
pub use wait::DEFAULT_WAIT_LIMIT;
