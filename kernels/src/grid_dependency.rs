//! Programmatic dependent launch (sm_90): the host may launch a kernel while the kernel ahead of
//! it on the stream is still finishing, so its launch overlaps the other's tail. Such a kernel
//! must not touch global memory before `griddepcontrol.wait`, which returns once every
//! prerequisite grid has completed and its writes are visible (PTX ISA, "griddepcontrol").
//! Launched without the attribute, the instruction returns at once.
//!
//! Every entry point calls [`wait_for_prerequisite_grids`] first. The PTX targets compute_80,
//! which has no `griddepcontrol`, so the call emits [`GRID_WAIT_MARKER`], a PTX comment, that
//! `build.rs` turns into the instruction in the PTX it assembles for `GRID_WAIT_MIN_SM` and
//! later. Either way the `asm!` is a compiler barrier (it may touch memory), so no load or store
//! of the kernel moves above it. `tests/ptx.rs` checks every entry point opens with it.
//!
//! [`GRID_WAIT_MARKER`]: crate::config::GRID_WAIT_MARKER

/// Waits for the prerequisite grids of a programmatic dependent launch (a no-op otherwise).
#[inline(always)]
pub fn wait_for_prerequisite_grids() {
    // SAFETY: a PTX comment, or `griddepcontrol.wait` in the sm_90 images: neither reads or
    // writes anything the kernel can see.
    unsafe { asm!(grid_wait_marker!(), options(nostack)) }
}
