//! drivelink-models: reference models.
