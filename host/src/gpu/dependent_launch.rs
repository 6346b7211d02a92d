//! Programmatic dependent launch (compute capability 9.0): a kernel launched through
//! `cuLaunchKernelEx` with `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` may be
//! launched while the kernel ahead of it on the stream finishes, so the launch's latency (about
//! 1 µs on an H200) overlaps the other kernel's tail instead of following it.
//!
//! What makes it correct:
//! - The launched kernel must not touch memory before `griddepcontrol.wait`, which returns once
//!   every prerequisite grid has completed and its writes are visible to the grid (PTX ISA,
//!   "griddepcontrol"; CUDA Programming Guide, "Programmatic Dependent Launch"). Every entry
//!   point of the sm_90 images waits first (`kernels/src/grid_dependency.rs`; `tests/ptx.rs`
//!   checks each one), so the host launches this way only where the loaded image is such a cubin
//!   ([`LoadedImage::waits_for_prerequisite_grids`](crate::image::LoadedImage::waits_for_prerequisite_grids)).
//! - No kernel of the library triggers its dependents early (`griddepcontrol.launch_dependents`),
//!   so a dependent grid starts only once each block ahead of it has exited: it never takes an SM
//!   a block of the earlier grid still waits for.
//! - Only the kernel-to-kernel order on one stream is relaxed: copies, memsets, event waits and
//!   host reads keep their order, and a kernel launched after one of them waits as before.
//!
//! [`LaunchOverlap::Auto`] is the default of every stream; [`LaunchOverlap::Serial`] turns it
//! off (`GpuStream::set_launch_overlap`).
use cust::sys::{CUfunction, CUresult, CUstream};
use std::ffi::c_void;

/// How a stream's kernels start relative to the kernel ahead of them on the stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchOverlap {
    /// Programmatic dependent launch where the loaded image's entry points wait for the
    /// prerequisite grids (the sm_90 cubin) and the driver is CUDA 12.3 or later; otherwise
    /// [`LaunchOverlap::Serial`].
    Auto,
    /// Each kernel is launched once the one ahead of it has finished (`cuLaunchKernel`).
    Serial,
}

impl Default for LaunchOverlap {
    fn default() -> Self {
        LaunchOverlap::Auto
    }
}

/// CUDA 12.3, as `cuDriverGetVersion` reports it. `cuLaunchKernelEx` came with 12.0; graph
/// edges carry the programmatic kind from 12.3 (`CUgraphEdgeData`), so a stream capture of these
/// launches is left to drivers that can record them.
const MIN_DRIVER_VERSION: i32 = 12030;

/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` (cuda.h, `CUlaunchAttributeID`).
const PROGRAMMATIC_STREAM_SERIALIZATION: u32 = 6;

/// `CUlaunchAttribute`: the id, padding to 8 bytes, then the 64-byte value union, whose
/// `programmaticStreamSerializationAllowed` is an `int` at offset 0.
#[repr(C)]
struct LaunchAttribute {
    id: u32,
    pad: u32,
    value: [u64; 8],
}

/// `CUlaunchConfig`.
#[repr(C)]
struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared_mem_bytes: u32,
    stream: CUstream,
    attrs: *mut LaunchAttribute,
    num_attrs: u32,
}

/// `cuLaunchKernelEx`.
type LaunchKernelEx =
    unsafe extern "C" fn(*const LaunchConfig, CUfunction, *mut *mut c_void, *mut *mut c_void) -> CUresult;

/// The driver's `cuLaunchKernelEx`, for launches that may overlap the kernel ahead of them.
#[derive(Clone, Copy)]
pub(super) struct DependentLauncher(LaunchKernelEx);

impl DependentLauncher {
    /// `cuLaunchKernelEx` from the driver (`cuGetProcAddress`), or `None` before
    /// [`MIN_DRIVER_VERSION`].
    pub(super) fn resolve() -> Option<DependentLauncher> {
        let mut version = 0;
        // SAFETY: one int is written.
        if unsafe { cust::sys::cuDriverGetVersion(&mut version) } != CUresult::CUDA_SUCCESS
            || version < MIN_DRIVER_VERSION
        {
            return None;
        }
        let mut pfn: *mut c_void = std::ptr::null_mut();
        let name = b"cuLaunchKernelEx\0";
        // SAFETY: a NUL-terminated name; one pointer is written. 12000: the version that
        // introduced the symbol; flags 0: CU_GET_PROC_ADDRESS_DEFAULT.
        let found = unsafe { cust::sys::cuGetProcAddress(name.as_ptr() as *const _, &mut pfn, 12000, 0) };
        if found != CUresult::CUDA_SUCCESS || pfn.is_null() {
            return None;
        }
        // SAFETY: the driver's `cuLaunchKernelEx`, whose C signature `LaunchKernelEx` spells.
        Some(DependentLauncher(unsafe { std::mem::transmute::<*mut c_void, LaunchKernelEx>(pfn) }))
    }

    /// Enqueues `function` as `cuLaunchKernel` would, allowing it to launch before the kernel
    /// ahead of it on `stream` has finished.
    ///
    /// # Safety
    /// As `cuLaunchKernel` with these arguments, and every entry point of `function`'s module
    /// waits for the prerequisite grids before it touches memory.
    pub(super) unsafe fn launch(
        self,
        function: CUfunction,
        grid: u32,
        block: u32,
        stream: CUstream,
        params: *mut *mut c_void,
    ) -> CUresult {
        let mut value = [0u64; 8];
        value[0] = 1; // programmaticStreamSerializationAllowed = 1 (an int, little-endian)
        let mut attr = LaunchAttribute { id: PROGRAMMATIC_STREAM_SERIALIZATION, pad: 0, value };
        let config = LaunchConfig {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            shared_mem_bytes: 0,
            stream,
            attrs: &mut attr,
            num_attrs: 1,
        };
        // SAFETY: the caller's promise; `config` and `attr` outlive the call, which copies them.
        unsafe { (self.0)(&config, function, params, std::ptr::null_mut()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layouts cuda.h gives these structs on 64-bit Linux.
    #[test]
    fn launch_structs_match_cuda_h() {
        assert_eq!(std::mem::size_of::<LaunchAttribute>(), 72);
        assert_eq!(std::mem::align_of::<LaunchAttribute>(), 8);
        assert_eq!(std::mem::size_of::<LaunchConfig>(), 56);
        let config = LaunchConfig {
            grid: [0; 3],
            block: [0; 3],
            shared_mem_bytes: 0,
            stream: std::ptr::null_mut(),
            attrs: std::ptr::null_mut(),
            num_attrs: 0,
        };
        let base = &config as *const LaunchConfig as usize;
        assert_eq!(&config.shared_mem_bytes as *const u32 as usize - base, 24);
        assert_eq!(&config.stream as *const CUstream as usize - base, 32);
        assert_eq!(&config.attrs as *const *mut LaunchAttribute as usize - base, 40);
        assert_eq!(&config.num_attrs as *const u32 as usize - base, 48);
    }
}
