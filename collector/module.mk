# collector/module.mk — placeholder until the collector lands.
