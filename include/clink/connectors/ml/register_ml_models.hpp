#pragma once
// Registers ML_PREDICT's lookup source (the model providers behind it: model_provider.hpp)
// with the process's lookup sources; the built-in registry calls it.
namespace clink::sql {

void register_ml_models();

}  // namespace clink::sql
