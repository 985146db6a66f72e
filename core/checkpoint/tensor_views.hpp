// The interface every weight source meets: the tensors it holds, each a view of
// bytes owned elsewhere (a memory-mapped file natively, an ArrayBuffer in wasm)
// under its Hugging Face name from llama_tensors.hpp, in the source's own layout
// (projections [out, in]) and precision. Nothing is copied or checked against a
// config here: llama_views.hpp binds a source's views to a ModelConfig (one shape
// check, one error style), and every loader starts from that binding:
//   model_from_views (model_from_views.hpp)    widened to Model<float>, [in, out]  (attn verify)
//   pretrained_from_views (pretrained_model)   used in place as WeightViews        (attn probe)
//
// The sources. Each is one file that turns its input into TensorViews; adding one
// is that file, its declaration below, its line in core/CMakeLists.txt (and
// tests/fuzz/project/CMakeLists.txt), and the branch of native/checkpoint_dir.cpp's
// open_checkpoint that recognises its files:
//   safetensors_views.cpp  Hugging Face safetensors, one file or shards
//                          (the generated-from-seed weights reach the loaders the same
//                          way: hf_safetensors(random_model(...)) bytes, as the tests do)
//   llama2c.cpp            llama2.c's .bin files, version 0 and 1 (llama2c.hpp): a header,
//                          then float32 arrays [layers, out, in] whose per-layer slices are
//                          viewed under hf_tensor_name(weight, layer); interleaved RoPE
//                          pairing; the RoPE tables are skipped, not viewed
// No source permutes channels: the config's rope_pairing says which pairs its q and k
// rotate (Hugging Face: half_split, from config_from_hf_json), and the loaders keep it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../non_finite.hpp"
#include "safetensors.hpp"

namespace anatomy {

struct TensorView {
    std::string name;                     // the Hugging Face name
    const std::uint8_t* bytes = nullptr;  // size_bytes() bytes, little-endian, row-major
    DType dtype = DType::f32;
    std::vector<std::size_t> shape;       // as stored: a projection [out, in]

    std::size_t elements() const;
    std::size_t size_bytes() const { return elements() * dtype_size(dtype); }
};

// Every tensor of a source, in the source's order. A name held twice (by two
// shards) appears twice; llama_views refuses it if it is a name it reads.
using TensorViews = std::vector<TensorView>;

// The tensor's values widened to float32 (exactly), row-major.
std::vector<float> read_floats(const TensorView& tensor);

// Every value of every tensor that is not finite (NaN or infinite), read off the
// stored bits in place: the first one (tensor, index, value) and how many there are
// in all; nothing when every weight is finite. A reader warns of them: every check
// on such a model fails.
std::optional<NonFinite> non_finite_weights(const TensorViews& tensors);

// Source: Hugging Face safetensors. Every tensor of every shard (parsed files,
// whose bytes must outlive the views), shard by shard.
TensorViews safetensors_views(const std::vector<const SafetensorsView*>& shards);
// One tensor of one file, by name; throws InputError when it is not there.
TensorView safetensors_view(const SafetensorsView& file, const std::string& name);

}  // namespace anatomy
