"""Installers that live in the core because their runtime has no stdin adapter package."""
