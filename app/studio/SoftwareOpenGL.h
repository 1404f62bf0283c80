#pragma once
// Whether OpenGL is drawn by the CPU (Mesa's llvmpipe or softpipe under xvfb, remote desktops and
// virtual machines without a GPU). There every triangle and every multisample costs CPU time on the
// GUI thread: a frame of 1.4 M triangles with 8x multisampling took 0.4-1.2 s on 2 cores here,
// 0.12 M triangles without multisampling about 70 ms. The 3-D view sizes its defaults by it.
namespace medseg::studio {

// Asked once per process from a throw-away context; needs the QGuiApplication. True when no context
// can be made (the view will be drawn by whatever fallback Qt finds, as cheaply as possible).
bool isSoftwareOpenGL();

}  // namespace medseg::studio
