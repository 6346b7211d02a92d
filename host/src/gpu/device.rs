//! The device as every handle and stream of it shares it: context, loaded module, entry table,
//! properties and occupancy, all read once at open.
use super::context::{self, Entered};
use super::dependent_launch::DependentLauncher;
use crate::entries::entry_names;
use crate::error::{Check, Error, Result};
use crate::image::{ImageChoice, KernelImages, LoadedImage, MIN_COMPUTE_CAPABILITY};
use cust::context::Context;
use cust::device::{Device, DeviceAttribute};
use cust::function::{BlockSize, Function};
use cust::module::Module;
use std::collections::HashMap;
use std::sync::Mutex;

/// What every handle and stream of one device shares: context, module, kernel table and the
/// device's counts. Immutable after open, the occupancy cache aside.
pub(super) struct LoadedDevice {
    /// Every entry point (`entries::entry_names` order), resolved at open. Declared before
    /// `_module` so it drops first; the `'static` stands for "as long as `_module`".
    functions: Vec<Function<'static>>,
    _module: Module,
    pub(super) name: String,
    pub(super) sm_count: u32,
    pub(super) max_threads_per_sm: u32,
    pub(super) max_grid_x: u32,
    pub(super) l2_bytes: usize,
    pub(super) ordinal: u32,
    /// Unified addressing: kernels can store into pinned host memory at its host address.
    pub(super) unified: bool,
    pub(super) compute_capability: (u32, u32),
    pub(super) image: LoadedImage,
    /// `cuLaunchKernelEx`, where `image` waits for the prerequisite grids and the driver has it.
    pub(super) dependent_launcher: Option<DependentLauncher>,
    /// Resident blocks per SM by (entry, block size), from the occupancy calculator; filled
    /// on first use.
    occupancy: Mutex<HashMap<(usize, u32), u32>>,
    /// The device's primary context, retained for the life of the process.
    pub(super) context: &'static Context,
}

impl LoadedDevice {
    /// Opens device `ordinal`, makes its primary context current (and leaves it so) and loads the image of
    /// `images` that `choice` picks for it ([`KernelImages::pick`]). `Error::NoDevice` where
    /// there is no device, `Error::UnsupportedDevice` below compute capability 8.0.
    pub(super) fn open(images: &KernelImages, ordinal: u32, choice: ImageChoice) -> Result<LoadedDevice> {
        cust::init(cust::CudaFlags::empty()).check("cuInit")?;
        if Device::num_devices().check("cuDeviceGetCount")? <= ordinal {
            return Err(Error::NoDevice);
        }
        let device = Device::get_device(ordinal).check("cuDeviceGet")?;
        let context = context::retain_primary(device, ordinal)?;
        let attr = |a| device.get_attribute(a).check("cuDeviceGetAttribute");
        let compute_capability = (
            attr(DeviceAttribute::ComputeCapabilityMajor)? as u32,
            attr(DeviceAttribute::ComputeCapabilityMinor)? as u32,
        );
        let (major, minor) = compute_capability;
        let image = images
            .pick(choice, major, minor)
            .ok_or(Error::UnsupportedDevice { compute_capability, minimum: MIN_COMPUTE_CAPABILITY })?;
        let module = load_module(images, image)?;
        Ok(LoadedDevice {
            functions: resolve_entries(&module)?,
            sm_count: attr(DeviceAttribute::MultiprocessorCount)? as u32,
            max_threads_per_sm: attr(DeviceAttribute::MaxThreadsPerMultiprocessor)? as u32,
            max_grid_x: attr(DeviceAttribute::MaxGridDimX)? as u32,
            l2_bytes: attr(DeviceAttribute::L2CacheSize)? as usize,
            name: device.name().check("cuDeviceGetName")?,
            ordinal,
            unified: attr(DeviceAttribute::UnifiedAddressing)? == 1,
            compute_capability,
            image,
            dependent_launcher: if image.waits_for_prerequisite_grids() { DependentLauncher::resolve() } else { None },
            occupancy: Mutex::new(HashMap::new()),
            _module: module,
            context,
        })
    }

    /// Makes the context current on the calling thread (if it is not already) and leaves it so.
    pub(super) fn bind(&self) -> Result<()> {
        context::bind(self.context)
    }

    /// Makes the context current on the calling thread until the returned guard drops, which
    /// gives the caller's context (or none) back.
    pub(super) fn enter(&self) -> Result<Entered> {
        context::enter(self.context)
    }

    /// The function of entry point `entry` (an `entries` index).
    pub(super) fn function(&self, entry: usize) -> &Function<'static> {
        &self.functions[entry]
    }

    /// Blocks of `block` threads of entry point `entry` one SM holds at once (registers and
    /// shared memory included), from the driver's occupancy calculator; cached per device.
    pub(super) fn blocks_per_sm(&self, entry: usize, block: u32) -> Result<u32> {
        let mut cache = self.occupancy.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&blocks) = cache.get(&(entry, block)) {
            return Ok(blocks);
        }
        let _entered = self.enter()?;
        let blocks = self.functions[entry]
            .max_active_blocks_per_multiprocessor(BlockSize::x(block), 0)
            .check("cuOccupancyMaxActiveBlocksPerMultiprocessor")?
            .max(1);
        cache.insert((entry, block), blocks);
        Ok(blocks)
    }
}

impl Drop for LoadedDevice {
    fn drop(&mut self) {
        // The module unloads in this context, whichever thread drops the last reference (which
        // keeps it current, as dropping a stream does).
        let _ = self.bind();
    }
}

/// Loads `image` of `images` into the current context.
fn load_module(images: &KernelImages, image: LoadedImage) -> Result<Module> {
    match image {
        LoadedImage::Cubin { sm } => {
            Module::from_cubin(images.cubin(sm).expect("a picked cubin"), &[]).check("cuModuleLoadData")
        }
        LoadedImage::Ptx => Module::from_ptx(images.ptx, &[]).check("cuModuleLoadData"),
    }
}

/// Every entry point of `module`, in `entries::entry_names` order.
fn resolve_entries(module: &Module) -> Result<Vec<Function<'static>>> {
    entry_names()
        .iter()
        .map(|name| {
            let f = module.get_function(name).check("cuModuleGetFunction")?;
            // SAFETY: the handle lives in `LoadedDevice::functions`, which drops before `_module`.
            Ok(unsafe { std::mem::transmute::<Function<'_>, Function<'static>>(f) })
        })
        .collect()
}

/// The device's properties and context as methods of a handle that reaches its
/// `LoadedDevice` at `self.$path`: a `Gpu` and each of its streams answer alike.
macro_rules! device_methods {
    ($($path:ident).+) => {
        /// The device's name.
        pub fn name(&self) -> &str {
            &self.$($path).+.name
        }
        /// Streaming multiprocessors.
        pub fn sm_count(&self) -> u32 {
            self.$($path).+.sm_count
        }
        /// Threads one SM keeps resident at most.
        pub fn max_threads_per_sm(&self) -> u32 {
            self.$($path).+.max_threads_per_sm
        }
        /// The device's largest grid (blocks in x).
        pub fn max_grid_x(&self) -> u32 {
            self.$($path).+.max_grid_x
        }
        /// Bytes of L2 cache.
        pub fn l2_bytes(&self) -> usize {
            self.$($path).+.l2_bytes
        }
        /// The device's ordinal (as `Gpu::new` took it).
        pub fn ordinal(&self) -> u32 {
            self.$($path).+.ordinal
        }
        /// (major, minor).
        pub fn compute_capability(&self) -> (u32, u32) {
            self.$($path).+.compute_capability
        }
        /// The kernel image the device loaded.
        pub fn image(&self) -> crate::image::LoadedImage {
            self.$($path).+.image
        }
        /// Makes this device's primary context current on the calling thread and leaves it so
        /// (replacing the top of the thread's context stack, as `cuCtxSetCurrent` does).
        ///
        /// The library's own calls need no `bind`: entry points and `download` make the context
        /// current for the call and give the caller's back; `upload`, `alloc_zeroed` and
        /// `new_stream` bind it themselves. A caller needs it before its own cust calls on this
        /// device (`DeviceBuffer::from_slice`, `copy_to`, its own streams and events) on a thread
        /// where no context or another one is current: a fresh thread that shares an
        /// `Arc<Gpu>`, or after work on another device. Binding once on a worker thread also
        /// saves each entry point the switch there and back.
        pub fn bind(&self) -> crate::error::Result<()> {
            self.$($path).+.bind()
        }
    };
}
pub(super) use device_methods;
