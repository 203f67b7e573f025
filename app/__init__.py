"""The viewer: pyglet window, moderngl renderer, imgui-bundle UI, VR."""
