// Found only through the include directory tests/kernels/vulkan/idir.
#define FROM_IDIR 7u
