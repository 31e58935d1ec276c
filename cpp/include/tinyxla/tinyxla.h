// The C++ API of tinyxla in one include.
#pragma once
#include "tinyxla/array.h"
#include "tinyxla/buffer.h"
#include "tinyxla/device.h"
#include "tinyxla/dtype.h"
#include "tinyxla/error.h"
#include "tinyxla/future.h"
#include "tinyxla/ops.h"
#include "tinyxla/shape.h"
