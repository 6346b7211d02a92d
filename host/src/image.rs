//! Kernel images: SASS cubins for the architectures they were assembled for, and the PTX that
//! the driver compiles for any other. Which one a device loads is decided here, on the CPU.

/// A SASS cubin and the architecture it was assembled for (`sm` = 10 · major + minor).
///
/// One for `config::GRID_WAIT_MIN_SM` or later must be this crate's (`build.rs` makes every
/// entry point wait for the prerequisite grids first): the host launches its kernels so that
/// they may start before the kernel ahead of them has finished.
#[derive(Clone, Copy, Debug)]
pub struct Cubin {
    pub sm: u32,
    pub image: &'static [u8],
}

impl Cubin {
    /// The architecture an NVIDIA cubin was assembled for: the low byte of its 64-bit ELF
    /// header's `e_flags`; `None` for anything that is not a 64-bit ELF image.
    pub fn arch_of(image: &[u8]) -> Option<u32> {
        if image.len() < 64 || &image[..4] != b"\x7fELF" || image[4] != 2 {
            return None;
        }
        Some(u32::from_le_bytes([image[48], image[49], image[50], image[51]]) & 0xff)
    }
}

/// The kernels in every form a [`crate::Gpu`] can load.
#[derive(Clone, Copy, Debug)]
pub struct KernelImages {
    /// `compute_80` PTX: runs on compute capability 8.0 and later after the driver compiles it.
    pub ptx: &'static str,
    pub cubins: &'static [Cubin],
}

/// The committed images, from the package of the kernels crate (`cudakernels-gpu`).
pub static COMMITTED: KernelImages = KernelImages { ptx: kernels::images::PTX, cubins: &COMMITTED_CUBINS };

const COMMITTED_CUBINS: [Cubin; 2] = [committed(0), committed(1)];

const fn committed(i: usize) -> Cubin {
    Cubin { sm: kernels::images::CUBINS[i].0, image: kernels::images::CUBINS[i].1 }
}

/// Which image to load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageChoice {
    /// The cubin for the device's architecture where there is one (no JIT), else the PTX.
    Auto,
    /// Always the PTX, compiled by the driver at load (its JIT cache may keep the result).
    Ptx,
}

impl Default for ImageChoice {
    fn default() -> Self {
        ImageChoice::Auto
    }
}

/// The image a [`crate::Gpu`] loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadedImage {
    Cubin { sm: u32 },
    Ptx,
}

impl LoadedImage {
    /// Whether every entry point waits for the prerequisite grids before it touches memory
    /// (`griddepcontrol.wait`), so its kernels may take a programmatic dependent launch: the
    /// cubins for `config::GRID_WAIT_MIN_SM` and later. The PTX targets compute_80, which has
    /// no such instruction.
    pub fn waits_for_prerequisite_grids(self) -> bool {
        matches!(self, LoadedImage::Cubin { sm } if sm >= kernels::config::GRID_WAIT_MIN_SM)
    }
}

/// The oldest compute capability the PTX runs on (its `.target sm_80`).
pub const MIN_COMPUTE_CAPABILITY: (u32, u32) = (8, 0);

impl KernelImages {
    /// What `choice` loads on a device of compute capability `major.minor`, or `None` below
    /// [`MIN_COMPUTE_CAPABILITY`]. `Auto` takes the newest cubin of the device's major version
    /// that is not newer than the device (SASS runs on later minor versions of its major
    /// version), else the PTX.
    pub fn pick(&self, choice: ImageChoice, major: u32, minor: u32) -> Option<LoadedImage> {
        if (major, minor) < MIN_COMPUTE_CAPABILITY {
            return None;
        }
        let sm = 10 * major + minor;
        let cubin = self.cubins.iter().filter(|c| c.sm / 10 == major && c.sm <= sm).max_by_key(|c| c.sm);
        Some(match (choice, cubin) {
            (ImageChoice::Auto, Some(c)) => LoadedImage::Cubin { sm: c.sm },
            _ => LoadedImage::Ptx,
        })
    }

    /// The cubin assembled for `sm`.
    pub fn cubin(&self, sm: u32) -> Option<&'static [u8]> {
        self.cubins.iter().find(|c| c.sm == sm).map(|c| c.image)
    }
}
