#pragma once
// Error handling and RAII for the CUDA side of the kernels (STYLE.md rule 8): every CUDA status
// is checked and turned into a KernelError carrying the expression, file:line and the CUDA
// message; buffers, events and streams free themselves. Compiles with the host compiler.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>

namespace quantplan::kernels {

// A CUDA, cuBLASLt or launch failure: "<expression> failed at <file>:<line>: <message>".
class KernelError : public std::runtime_error {
public:
    KernelError(const std::string& expression, const char* file, int line, const std::string& message)
        : std::runtime_error(expression + " failed at " + file + ":" + std::to_string(line) + ": " + message) {}
};

// Throws KernelError when `status` is not cudaSuccess.
void check_cuda(cudaError_t status, const char* expression, const char* file, int line);

// Checks a CUDA runtime call.
#define QP_CUDA_CHECK(expr) ::quantplan::kernels::check_cuda((expr), #expr, __FILE__, __LINE__)

// Checks the launch just made (configuration errors surface here, not at the next sync).
#define QP_CHECK_LAUNCH(name) ::quantplan::kernels::check_cuda(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)

// A device allocation of `bytes` bytes (256-byte aligned, as cudaMalloc guarantees), freed on
// destruction. Move-only.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::uint64_t bytes);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    // The device pointer, viewed as T*.
    template <typename T>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    void* get() const { return ptr_; }
    std::uint64_t bytes() const { return bytes_; }

    // Copies `bytes` bytes from host memory to the start of the buffer (synchronous).
    void upload(const void* host, std::uint64_t bytes);
    // Copies `bytes` bytes from the start of the buffer to host memory (synchronous).
    void download(void* host, std::uint64_t bytes) const;

private:
    void* ptr_ = nullptr;
    std::uint64_t bytes_ = 0;
};

// A CUDA event (timing enabled), destroyed on destruction.
class CudaEvent {
public:
    CudaEvent();
    ~CudaEvent();
    CudaEvent(const CudaEvent&) = delete;
    CudaEvent& operator=(const CudaEvent&) = delete;
    CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
    cudaEvent_t get() const { return event_; }
    // Records the event on `stream`.
    void record(cudaStream_t stream);
    // Seconds from `start` to this event (both recorded and complete).
    double seconds_since(const CudaEvent& start) const;

private:
    cudaEvent_t event_ = nullptr;
};

// A non-blocking CUDA stream, destroyed on destruction.
class CudaStream {
public:
    CudaStream();
    ~CudaStream();
    CudaStream(const CudaStream&) = delete;
    CudaStream& operator=(const CudaStream&) = delete;
    cudaStream_t get() const { return stream_; }
    // Waits for everything queued on the stream; throws KernelError on a failure.
    void synchronize() const;

private:
    cudaStream_t stream_ = nullptr;
};

// Compute capability of the current device as major * 10 + minor (e.g. 90), cached per device.
int current_compute_capability();

// Number of SMs of the current device, cached per device.
int current_sm_count();

// Blocks of `kernel` (a __global__ function) with `threads` threads and `dynamic_smem_bytes` of
// dynamic shared memory that one SM of the current device holds at once
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor), at least 1; cached per device, kernel and
// launch shape, so launchers can size their grids to whole waves on every call.
int max_active_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_smem_bytes);

// True when `ptr` is aligned to `bytes`.
inline bool is_aligned(const void* ptr, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(ptr) % bytes == 0; }

}  // namespace quantplan::kernels
