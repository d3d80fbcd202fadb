// flashtile: exact attention on CUDA, Vulkan and the CPU through one API.
#pragma once

#include <flashtile/attention.hpp>
#include <flashtile/device.hpp>
#include <flashtile/ring.hpp>
#include <flashtile/serving.hpp>
#include <flashtile/tensor.hpp>
#include <flashtile/types.hpp>
#include <flashtile/version.hpp>
