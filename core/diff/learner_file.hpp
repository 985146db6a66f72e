// A learner's intermediate tensors as attn diff reads them: a NumPy .npz archive
// (np.savez: a zip of .npy files, stored uncompressed) or a safetensors file, each
// tensor float32 or float64. tools/anatomy_dump.py writes either.
//
//   .npz:         zip local headers + central directory (zip64 sizes as NumPy writes
//                 them); each member NAME.npy: "\x93NUMPY", version, a header dict
//                 {'descr': '<f4' | '<f8', 'fortran_order': False, 'shape': (...)}, data
//   .safetensors: core/checkpoint/safetensors.hpp (F32 or F64 here)
// The bytes are read from memory (a file natively, a dropped file in the page).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace anatomy {

struct LearnerTensor {
    std::vector<std::size_t> shape;
    std::vector<double> values;  // row-major, widened exactly from the file
    bool float64 = false;        // the precision the learner computed in
};

// name -> tensor, in name order. Throws InputError naming the file and what is
// wrong: neither format, truncated, compressed members (np.savez_compressed),
// Fortran order, a dtype other than float32 or float64, a size that does not
// match the shape, a name given twice.
std::map<std::string, LearnerTensor> read_learner_tensors(const std::uint8_t* bytes, std::size_t size,
                                                          const std::string& source);

}  // namespace anatomy
