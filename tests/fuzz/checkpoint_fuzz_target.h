#pragma once
// The fuzz target of the checkpoint parsers: one input is tried as a safetensors file, as a
// config.json (model and quantization config), as a model.safetensors.index.json, as a name
// pattern, as a whole checkpoint through the inspector, and as an engine's startup log and a
// benchmark result (quantplan --check). Only quantplan::Error may come out;
// anything else (another exception, a crash, a sanitizer report) is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace quantplan::fuzz {

// Runs every parser on `data`. Returns normally or throws what a parser let escape other than Error.
void run_one_input(const std::uint8_t* data, std::size_t size);

// Seed inputs: valid safetensors files of every exporter layout and published quantization configs.
std::vector<std::string> seed_corpus();

}  // namespace quantplan::fuzz
