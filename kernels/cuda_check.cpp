#include "kernels/cuda_check.h"

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>

namespace quantplan::kernels {

void check_cuda(cudaError_t status, const char* expression, const char* file, int line) {
    if (status == cudaSuccess) return;
    throw KernelError(expression, file, line, std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status));
}

DeviceBuffer::DeviceBuffer(std::uint64_t bytes) : bytes_(bytes) {
    if (bytes > 0) QP_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // a destructor must not throw; a failed free leaks nothing we can recover
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
        if (ptr_) cudaFree(ptr_);
        ptr_ = std::exchange(other.ptr_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void DeviceBuffer::upload(const void* host, std::uint64_t bytes) {
    if (bytes > bytes_) throw KernelError("DeviceBuffer::upload", __FILE__, __LINE__, "more bytes than the buffer holds");
    if (bytes > 0) QP_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}

void DeviceBuffer::download(void* host, std::uint64_t bytes) const {
    if (bytes > bytes_) throw KernelError("DeviceBuffer::download", __FILE__, __LINE__, "more bytes than the buffer holds");
    if (bytes > 0) QP_CUDA_CHECK(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}

CudaEvent::CudaEvent() { QP_CUDA_CHECK(cudaEventCreate(&event_)); }

CudaEvent::~CudaEvent() {
    if (event_) cudaEventDestroy(event_);
}

void CudaEvent::record(cudaStream_t stream) { QP_CUDA_CHECK(cudaEventRecord(event_, stream)); }

double CudaEvent::seconds_since(const CudaEvent& start) const {
    float ms = 0;
    QP_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return static_cast<double>(ms) * 1e-3;
}

CudaStream::CudaStream() { QP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }

CudaStream::~CudaStream() {
    if (stream_) cudaStreamDestroy(stream_);
}

void CudaStream::synchronize() const { QP_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

namespace {

// Per-device attribute cache (devices 0..63).
struct DeviceAttributes {
    int compute_capability = 0;
    int sm_count = 0;
};

DeviceAttributes attributes_of_current_device() {
    static std::mutex mutex;
    static std::array<DeviceAttributes, 64> cache{};
    int device = 0;
    QP_CUDA_CHECK(cudaGetDevice(&device));
    const std::lock_guard<std::mutex> lock(mutex);
    if (device < 0 || device >= static_cast<int>(cache.size())) throw KernelError("cudaGetDevice", __FILE__, __LINE__, "device index out of range");
    DeviceAttributes& a = cache[static_cast<std::size_t>(device)];
    if (a.compute_capability == 0) {
        int major = 0, minor = 0;
        QP_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
        QP_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
        QP_CUDA_CHECK(cudaDeviceGetAttribute(&a.sm_count, cudaDevAttrMultiProcessorCount, device));
        a.compute_capability = major * 10 + minor;
    }
    return a;
}

}  // namespace

int current_compute_capability() { return attributes_of_current_device().compute_capability; }

int current_sm_count() { return attributes_of_current_device().sm_count; }

int max_active_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_smem_bytes) {
    using Key = std::tuple<int, const void*, int, std::size_t>;
    static std::mutex mutex;
    static std::map<Key, int> cache;
    int device = 0;
    QP_CUDA_CHECK(cudaGetDevice(&device));
    const Key key{device, kernel, threads, dynamic_smem_bytes};
    {
        const std::lock_guard<std::mutex> lock(mutex);
        if (const auto it = cache.find(key); it != cache.end()) return it->second;
    }
    int blocks = 0;
    QP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_smem_bytes));
    blocks = std::max(1, blocks);
    const std::lock_guard<std::mutex> lock(mutex);
    cache.emplace(key, blocks);
    return blocks;
}

}  // namespace quantplan::kernels
