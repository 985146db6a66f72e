// A KV-cache session for the page's stepper: prefill a prompt, then decode one
// token at a time through the core's cache, and after every step compare the
// cached logits with a full recomputation of the whole sequence.
//
//   const s = new core.DecodeSession({seed: 1});
//   s.prefill({tokens: [1, 2, 3]});   -> step report (below), as JSON text
//   s.step({token: 4});               -> step report
//   s.append({tokens: [4, 9]});       -> step report: several tokens through the cache in one
//                                        pass (a chunk), as a chunked prefill runs them
//   s.reset(); s.delete();                              (embind objects are freed by hand)
//
// A step report: {position (the cache's counter after the step), history (keys
// cached before it), new_tokens, tokens (all so far), cache_shape [B, Hkv, S, dh],
// cache_bytes_fp32, keys: the layer-0 cache [Hkv][S][dh] (to show rows appended),
// mask [T_new][S] (1 = visible), probabilities [L][Hq][T_new][S], cached_logits
// [T_new][V], full_logits [T_new][V] (the same rows from a fresh full pass),
// max_abs_diff (null when a value is not finite), argmax_agrees} or {error}.
#include <algorithm>
#include <vector>

#include <emscripten/bind.h>
#include <xtensor/xview.hpp>

#include "json_args.hpp"
#include "model/cache_payload.hpp"
#include "model/forward.hpp"
#include "ops/attention.hpp"
#include "verify/compare.hpp"
#include "verify/trace.hpp"

namespace anatomy::wasm {

// The longest sequence the stepper keeps; a full recomputation runs after every step.
constexpr std::size_t max_session_tokens = 64;

const Options decode_session_options{"DecodeSession", {"seed"}};
const Options decode_prefill_options{"DecodeSession.prefill", {"tokens"}};
const Options decode_step_options{"DecodeSession.step", {"token"}};
const Options decode_append_options{"DecodeSession.append", {"tokens"}};
class DecodeSession {
public:
    explicit DecodeSession(const emscripten::val& options_js) {
        // A bad option leaves a session with the default seed; the page passes only known keys.
        const std::string error = json_or_error([&] {
            model_ = seeded_tiny_model(seed_option(options_from_js(options_js, decode_session_options)));
            return json::object();
        });
        if (error != "{}") model_ = seeded_tiny_model(default_seed);
        reset();
    }

    void reset() {
        cache_ = empty_cache<float>(model_.config, 1);
        tokens_.clear();
    }

    std::string prefill(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, decode_prefill_options);
            const std::vector<std::int32_t> ids = token_list(options.value("tokens", json::array()), model_.config.vocab_size);
            if (ids.empty()) throw InputError("prefill needs at least one token");
            reset();
            return advance(ids);
        });
    }

    std::string step(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, decode_step_options);
            if (!options.contains("token")) throw InputError("step needs a token, e.g. {\"token\": 7}");
            return advance({token_id(options["token"], model_.config.vocab_size)});
        });
    }

    std::string append(const emscripten::val& options_js) {
        return json_or_error([&] {
            const json options = options_from_js(options_js, decode_append_options);
            const std::vector<std::int32_t> ids = token_list(options.value("tokens", json::array()), model_.config.vocab_size);
            if (ids.empty()) throw InputError("append needs at least one token");
            if (tokens_.empty()) throw InputError("the cache is empty: prefill a prompt first");
            return advance(ids);
        });
    }

private:
    // Runs `ids` through the cache, then the whole sequence from scratch, and reports both.
    json advance(const std::vector<std::int32_t>& ids) {
        if (tokens_.size() + ids.size() > max_session_tokens)
            throw InputError("the stepper keeps at most " + std::to_string(max_session_tokens) + " tokens; reset to start again");
        TokenIds fresh({1, ids.size()});
        std::copy(ids.begin(), ids.end(), fresh.begin());
        const std::int64_t history = cache_.position;

        ForwardCapture<float> capture;
        const Tensor3<float> cached = forward(model_, cache_, fresh, AttentionPath::grouped, &capture);  // [1, T_new, V]
        tokens_.insert(tokens_.end(), ids.begin(), ids.end());

        TokenIds all({1, tokens_.size()});
        std::copy(tokens_.begin(), tokens_.end(), all.begin());
        const Tensor3<float> full = full_forward(model_, all);  // [1, S, V]
        const auto new_rows = xt::view(full, 0, xt::range(std::size_t(history), tokens_.size()));  // [T_new, V]
        const Matrix<float> full_new = new_rows;
        const Matrix<float> cached_new = xt::view(cached, 0);

        const std::size_t V = full_new.shape(1);
        bool argmax_agrees = true;
        for (std::size_t t = 0; t < ids.size(); ++t) {
            const float* cached_row = &cached_new(t, 0);
            const float* full_row = &full_new(t, 0);
            argmax_agrees = argmax_agrees && std::max_element(cached_row, cached_row + V) - cached_row ==
                                                 std::max_element(full_row, full_row + V) - full_row;
        }

        json probabilities = json::array();  // [L][Hq][T_new][S]
        for (const LayerCapture<float>& layer : capture.layers) probabilities.push_back(to_nested_json(xt::view(layer.probs, 0)));
        const Tensor4<float>& keys = cache_.keys[0];  // [1, Hkv, S, dh]
        return {
            {"position", cache_.position},
            {"history", history},
            {"new_tokens", ids},
            {"tokens", tokens_},
            {"cache_shape", {keys.shape(0), keys.shape(1), keys.shape(2), keys.shape(3)}},
            {"cache_scalars", cache_.stored_scalars()},
            {"cache_bytes_fp32", cache_.stored_scalars() * sizeof(float)},
            {"payload_scalars_per_token", cache_payload(model_.config).scalars_per_token},
            {"keys", to_nested_json(xt::view(keys, 0))},
            {"mask", to_nested_json(causal_mask(ids.size(), std::size_t(cache_.position)))},
            {"probabilities", probabilities},
            {"cached_logits", to_nested_json(cached_new)},
            {"full_logits", to_nested_json(full_new)},
            {"max_abs_diff", max_abs_diff(cached_new, full_new)},
            {"argmax_agrees", argmax_agrees},
        };
    }

    Model<float> model_;
    KVCache<float> cache_;
    std::vector<std::int32_t> tokens_;
};

EMSCRIPTEN_BINDINGS(anatomy_session) {
    emscripten::class_<DecodeSession>("DecodeSession")
        .constructor<emscripten::val>()
        .function("prefill", &DecodeSession::prefill)
        .function("step", &DecodeSession::step)
        .function("append", &DecodeSession::append)
        .function("reset", &DecodeSession::reset);
}

}  // namespace anatomy::wasm
