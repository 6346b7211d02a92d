// The programmatic-dependent-launch constants, shared with `build.rs` through `include!`.

/// The oldest architecture whose cubins wait for the prerequisite grids at every entry point
/// (`griddepcontrol.wait` is sm_90's), so the host may launch them while the kernel ahead of
/// them on the stream finishes (programmatic dependent launch).
pub const GRID_WAIT_MIN_SM: u32 = 90;

/// The instruction that waits for the prerequisite grids.
pub const GRID_WAIT_INSTRUCTION: &str = "griddepcontrol.wait;";

/// [`GRID_WAIT_MARKER`] as a literal, for `asm!`'s template (`grid_dependency`).
macro_rules! grid_wait_marker {
    () => {
        "// sm_90: griddepcontrol.wait;"
    };
}

/// The PTX comment every entry point opens with (`grid_dependency`): `build.rs` turns it into
/// [`GRID_WAIT_INSTRUCTION`] in the PTX it assembles for `GRID_WAIT_MIN_SM` and later, since the
/// compute_80 PTX cannot hold the instruction.
pub const GRID_WAIT_MARKER: &str = grid_wait_marker!();
