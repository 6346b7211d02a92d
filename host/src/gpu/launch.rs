//! Kernel launches: the argument convention and the launch every entry point goes through.
use super::stream::Enqueue;
use crate::error::{Check, Result};
use cust::memory::{DeviceCopy, DeviceSlice};

/// Most parameters any kernel takes (sgemv's `&[f32]`s count two each).
const MAX_KERNEL_ARGS: usize = 16;

impl Enqueue<'_> {
    /// Launches entry point `entry` (an `entries` index) with the raw argument words `args`.
    pub(crate) fn launch(&self, entry: usize, grid: u32, block: u32, args: &[&dyn KernelArg]) -> Result<()> {
        assert!(args.len() <= MAX_KERNEL_ARGS, "a kernel takes at most {} parameters", MAX_KERNEL_ARGS);
        let function = self.stream.shared.function(entry);
        let mut ptrs = [std::ptr::null_mut(); MAX_KERNEL_ARGS];
        for (p, a) in ptrs.iter_mut().zip(args) {
            *p = a.as_arg_ptr();
        }
        // SAFETY: the callers pass exactly the kernel's parameters, in order, with device
        // pointers they validated; the launch result is checked, faults surface at the next sync.
        unsafe { self.stream.stream.launch(function, grid, block, 0, &ptrs[..args.len()]) }.check("cuLaunchKernel")
    }
}

/// A value passed to a kernel by address (cust's launch convention).
pub(crate) trait KernelArg {
    fn as_arg_ptr(&self) -> *mut std::ffi::c_void;
}
impl<T: DeviceCopy> KernelArg for T {
    fn as_arg_ptr(&self) -> *mut std::ffi::c_void {
        self as *const T as *mut std::ffi::c_void
    }
}

/// The device address and length of a slice: how a kernel's `&[T]` parameter is passed.
pub(crate) fn raw<T: DeviceCopy>(s: &DeviceSlice<T>) -> (u64, usize) {
    (s.as_device_ptr().as_raw(), s.len())
}
