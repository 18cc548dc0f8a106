"""The Voyager family: a generated DNN accelerator (weight-stationary array, vector unit, ML
datatypes) with its compiler, performance model and platform (docs/voyager.md)."""
