"""ImGui panels of the viewer."""
