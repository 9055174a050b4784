// read_safetensors_tensor: one tensor's bytes from a .safetensors file, through the checkpoint
// inspector's strict header reader (core/checkpoint/safetensors.h).
#include <bit>
#include <cstring>
#include <fstream>

#include "core/base/error.h"
#include "core/checkpoint/safetensors.h"
#include "core/errorsim/error_lab.h"
#include "core/errorsim/minifloat.h"

namespace quantplan::errorsim {

RealWeights read_safetensors_tensor(const std::string& path, const std::string& tensor_name, std::int64_t max_elements) {
    static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; add a byte swap for this host");
    const std::string field = "tensor '" + tensor_name + "' in " + path;
    const SafetensorsHeader header = read_safetensors_header(path);
    const SafetensorsTensor* found = nullptr;
    for (const SafetensorsTensor& t : header.tensors)
        if (t.name == tensor_name) found = &t;
    if (!found) throw Error(field, "no tensor of that name in the file (" + std::to_string(header.tensors.size()) + " tensors)");

    RealWeights w;
    w.name = tensor_name;
    int element_bytes = 0;
    switch (found->dtype) {
        case SafetensorsDtype::BF16: w.stored = DType::Bf16; element_bytes = 2; break;
        case SafetensorsDtype::F16: w.stored = DType::Fp16; element_bytes = 2; break;
        case SafetensorsDtype::F32: w.stored = DType::Fp32; element_bytes = 4; break;
        default:
            throw Error(field, "dtype " + std::string(safetensors_dtype_name(found->dtype)) +
                                   " is not a weight the lab reads (BF16, F16 or F32; a quantized tensor is already rounded)");
    }
    if (found->shape.empty()) throw Error(field, "is a scalar, not a weight matrix");
    // The last dimension is the input channels; any leading ones stack output rows (MoE experts).
    w.cols = found->shape.back();
    w.rows = 1;
    for (std::size_t i = 0; i + 1 < found->shape.size(); ++i) {
        if (found->shape[i] > 0 && w.rows > max_elements / found->shape[i]) throw Error(field, "has more elements than the lab's limit");
        w.rows *= found->shape[i];
    }
    if (w.rows <= 0 || w.cols <= 0) throw Error(field, "is empty");
    if (w.rows > max_elements / w.cols)
        throw Error(field, "has " + std::to_string(w.rows) + " x " + std::to_string(w.cols) + " elements, above the lab's limit of " +
                               std::to_string(max_elements));
    const std::uint64_t count = static_cast<std::uint64_t>(w.rows * w.cols);
    if (found->byte_count() != count * static_cast<std::uint64_t>(element_bytes)) throw Error(field, "byte count does not match its shape");

    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, "cannot open");
    in.seekg(static_cast<std::streamoff>(header.overhead_bytes() + found->begin_offset));
    std::vector<unsigned char> bytes(static_cast<std::size_t>(found->byte_count()));
    if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
        throw Error(path, "file ended inside tensor '" + tensor_name + "'");

    w.values.resize(static_cast<std::size_t>(count));
    const MinifloatFormat& fp16 = *minifloat_format(DType::Fp16);
    for (std::size_t i = 0; i < w.values.size(); ++i) {
        const unsigned char* p = bytes.data() + i * static_cast<std::size_t>(element_bytes);
        switch (w.stored) {
            case DType::Bf16: {
                const std::uint32_t bits = (static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8) << 16;
                w.values[i] = std::bit_cast<float>(bits);
                break;
            }
            case DType::Fp16:
                w.values[i] = static_cast<float>(decode_minifloat(static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8, fp16));
                break;
            default: std::memcpy(&w.values[i], p, 4); break;
        }
    }
    return w;
}

}  // namespace quantplan::errorsim
