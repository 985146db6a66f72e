#include "backend.hpp"

namespace anatomy {

Tensor3<float> TinyBackend::forward(const TokenIds& tokens, PassCapture* capture) {
    if (!capture) return anatomy::forward(model_, cache_, tokens, path_);
    ForwardCapture<float> full;
    Tensor3<float> logits = anatomy::forward(model_, cache_, tokens, path_, &full);
    capture->shapes = full.layers.empty() ? decltype(capture->shapes){} : full.layers[0].shapes;
    capture->layers = std::move(full.layers);
    return logits;
}

}  // namespace anatomy
