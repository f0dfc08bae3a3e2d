// _native.Group and _native.Multiscale: hierarchies and OME-Zarr images (zarrdirect/group.hpp).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include "abandonable.hpp"
#include "bindings.hpp"
#include "convert.hpp"
#include "zarrdirect/group.hpp"

namespace py = pybind11;

namespace zarrdirect::python {

void bind_group(py::module_& module) {
  py::class_<Group>(module, "Group", "An open Zarr group (the engine side of zarrdirect.Group).")
      .def_static(
          "open",
          [](const std::string& path, const StoreOptions& options) {
            return open_abandoning_on_interrupt<Group>([path, options] { return Group::open(path, options); });
          },
          py::arg("path"), py::arg("options") = StoreOptions{})
      .def_property_readonly("path", [](const Group& self) { return self.path().string(); })
      .def_property_readonly("zarr_format", &Group::zarr_format)
      .def_property_readonly("attributes", [](const Group& self) { return to_python(self.attributes()); })
      .def_property_readonly("consolidated", &Group::consolidated)
      // Each of these may wait on storage (a folder listing, HTTP requests): the GIL is released
      // meanwhile, so other Python threads (a loader, an in-process server) keep running.
      .def("members",
           [](const Group& self) {
             std::vector<GroupMember> members;
             {
               py::gil_scoped_release unlocked;
               members = self.member_nodes();
             }
             py::list out;
             for (const auto& member : members) out.append(py::make_tuple(member.name, to_string(member.type)));
             return out;
           })
      .def(
          "node_type",
          [](const Group& self, const std::string& relative) -> std::optional<std::string> {
            auto type = self.node_type(relative);
            if (!type) return std::nullopt;
            return std::string(to_string(*type));
          },
          py::call_guard<py::gil_scoped_release>())
      .def("open_array", &Group::open_array, py::arg("relative"), py::call_guard<py::gil_scoped_release>())
      .def("open_group", &Group::open_group, py::arg("relative"), py::call_guard<py::gil_scoped_release>())
      .def("array_metadata", [](const Group& self, const std::string& relative) {
        ArrayMetadata metadata;
        {
          py::gil_scoped_release unlocked;
          metadata = self.array_metadata(relative);
        }
        return to_python(describe_metadata(metadata));
      });

  py::class_<Multiscale>(module, "Multiscale", "An OME-Zarr multiscale image (the engine side).")
      .def_static(
          "open",
          [](const std::string& path, const StoreOptions& options) {
            return open_abandoning_on_interrupt<Multiscale>([path, options] { return Multiscale::open(path, options); });
          },
          py::arg("path"), py::arg("options") = StoreOptions{})
      .def_property_readonly("group", &Multiscale::group)
      .def_property_readonly("version", &Multiscale::version)
      .def_property_readonly("name", &Multiscale::name)
      .def_property_readonly("axes",
                             [](const Multiscale& self) {
                               py::list out;
                               for (const auto& axis : self.axes()) {
                                 py::dict item;
                                 item["name"] = axis.name;
                                 item["type"] = axis.type.empty() ? py::object(py::none()) : py::str(axis.type);
                                 item["unit"] = axis.unit.empty() ? py::object(py::none()) : py::str(axis.unit);
                                 out.append(item);
                               }
                               return out;
                             })
      .def_property_readonly("levels",
                             [](const Multiscale& self) {
                               py::list out;
                               for (const auto& level : self.levels()) {
                                 py::dict item;
                                 item["path"] = level.path;
                                 item["scale"] = level.scale;
                                 item["translation"] = level.translation;
                                 out.append(item);
                               }
                               return out;
                             })
      .def("level_path", [](const Multiscale& self, std::size_t level) { return self.level_path(level).string(); })
      .def("open_level", &Multiscale::open_level, py::arg("level"), py::call_guard<py::gil_scoped_release>())
      .def("level_metadata", [](const Multiscale& self, std::size_t level) {
        ArrayMetadata metadata;
        {
          py::gil_scoped_release unlocked;  // reads the level's metadata from storage
          metadata = self.level_metadata(level);
        }
        return to_python(describe_metadata(metadata));
      });
}

}  // namespace zarrdirect::python
